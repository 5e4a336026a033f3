#include "push/device_rate.h"

namespace qim {

bool DeviceRate::take(const UserId& user, const DeviceId& device, int64_t now_ms) {
  constexpr int64_t kMinute = 60'000;
  std::lock_guard lock(mu_);
  if (now_ms - last_sweep_ms_ >= kMinute) {  // devices quiet for a minute are forgotten
    std::erase_if(sent_, [now_ms](const auto& kv) {
      return kv.second.empty() || kv.second.back() <= now_ms - kMinute;
    });
    last_sweep_ms_ = now_ms;
  }
  auto& times = sent_[{user, device}];
  while (!times.empty() && times.front() <= now_ms - kMinute) times.pop_front();
  if (times.size() >= per_minute_) return false;
  times.push_back(now_ms);
  return true;
}

}  // namespace qim
