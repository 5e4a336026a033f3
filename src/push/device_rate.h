#pragma once
// How many notifications a device got in the last minute (QIM_PUSH_DEVICE_PER_MINUTE): a sliding window
// of send times per device, shared by the push consumer's partition threads (a device hears from every
// conversation, whatever partition it is on). In memory: a restart forgets it (at most one more minute's
// worth). Thread-safe.

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <utility>

#include "core/ids.h"

namespace qim {

class DeviceRate {
 public:
  explicit DeviceRate(uint32_t per_minute) : per_minute_(per_minute) {}
  // Whether the device may get one more at `now_ms`; if so it is counted.
  bool take(const UserId& user, const DeviceId& device, int64_t now_ms);

 private:
  uint32_t per_minute_;
  std::mutex mu_;
  std::map<std::pair<UserId, DeviceId>, std::deque<int64_t>> sent_;
  int64_t last_sweep_ms_ = 0;
};

}  // namespace qim
