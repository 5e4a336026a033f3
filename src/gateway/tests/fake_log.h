#pragma once
// An in-memory Log for the gateway's unit tests only. Appends can be held back ("not yet durable") so a
// test can check that nothing is acknowledged before the log says so.

#include <mutex>
#include <vector>

#include "log/log.h"

namespace qim::testing {

class FakeLog final : public Log {
 public:
  explicit FakeLog(uint32_t partitions) : records_(partitions) {}

  const std::string& name() const override { return name_; }
  uint32_t partition_count() const override { return static_cast<uint32_t>(records_.size()); }
  void append(uint32_t partition, std::string key, std::string value, AppendCallback done) override;
  Result<std::vector<LogRecord>> read(uint32_t partition, Offset from, size_t max,
                                      std::chrono::milliseconds wait) override;
  Result<Offset> end_offset(uint32_t partition) override;
  Status commit(const std::string&, uint32_t, Offset) override { return {}; }
  Result<std::optional<Offset>> committed(const std::string&, uint32_t) override {
    return std::optional<Offset>{};
  }

  // While held, appends are stored but their callbacks wait for release() (or fail with fail_held()).
  void hold(bool on);
  void release();
  void fail_held(Error error);
  size_t held() const;
  size_t total_records() const;
  std::vector<LogRecord> all_records() const;

 private:
  std::string name_ = "outbox";
  mutable std::mutex mu_;
  std::vector<std::vector<LogRecord>> records_;
  bool holding_ = false;
  std::vector<std::pair<AppendCallback, Result<Offset>>> pending_;
};

}  // namespace qim::testing
