#pragma once
// The Log contract (log/log.h) as a test suite every implementation runs: a binary per implementation
// instantiates LogContractTest with a LogBackend (embedded_log_contract_test.cc, kafka_log_contract_test.cc).
// Each test gets a fresh log (a new directory, a new topic) and opens instances of it through open().

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "core/clock.h"
#include "log/log.h"

namespace qim::testing {

// One fresh log of a test; open() returns a new instance of it each time.
class LogUnderTest {
 public:
  virtual ~LogUnderTest() = default;
  // A new instance with `partitions` partitions (fixed at the first open) and values up to
  // `max_record_bytes`; timestamps from `clock` (the system clock if null).
  virtual Result<std::unique_ptr<Log>> open(uint32_t partitions, size_t max_record_bytes = 4096,
                                            std::shared_ptr<const Clock> clock = nullptr) = 0;
  // True if two instances may be open at once (as two processes would).
  virtual bool multi_instance() const = 0;
};

struct LogBackend {
  std::string name;
  // Why the backend cannot run here (e.g. "set QIM_TEST_KAFKA_BROKERS"), empty if it can.
  std::function<std::string()> unavailable;
  std::function<std::unique_ptr<LogUnderTest>()> make;
};

// gtest prints a parameter with this (the default would dump its bytes).
inline void PrintTo(const LogBackend& backend, std::ostream* os) {
  *os << backend.name;
}

class LogContractTest : public ::testing::TestWithParam<LogBackend> {
 protected:
  void SetUp() override {
    if (std::string why = GetParam().unavailable(); !why.empty()) GTEST_SKIP() << why;
    log_ = GetParam().make();
  }
  std::unique_ptr<Log> open(uint32_t partitions, size_t max_record_bytes = 4096,
                            std::shared_ptr<const Clock> clock = nullptr) {
    auto log = log_->open(partitions, max_record_bytes, std::move(clock));
    if (!log.ok()) ADD_FAILURE() << "open: " << log.error().to_string();
    return log.ok() ? std::move(log).value() : nullptr;
  }

  std::unique_ptr<LogUnderTest> log_;
};

inline std::string backend_name(const ::testing::TestParamInfo<LogBackend>& info) {
  return info.param.name;
}

}  // namespace qim::testing
