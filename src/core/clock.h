#pragma once
// Time as the system sees it. Injected (never a global) so tests can move time for retention and tokens.

#include <atomic>
#include <chrono>
#include <cstdint>

namespace qim {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t now_ms() const = 0;  // milliseconds since the Unix epoch, UTC
};

class SystemClock final : public Clock {
 public:
  int64_t now_ms() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

// A clock tests set and advance by hand.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ms) : now_(start_ms) {}
  int64_t now_ms() const override { return now_.load(); }
  void advance_ms(int64_t delta) { now_ += delta; }
  void set_ms(int64_t t) { now_ = t; }

 private:
  std::atomic<int64_t> now_;
};

inline constexpr int64_t kDayMs = 86'400'000;

// UTC day of a server time: the unit of retention bookkeeping.
struct DayBucket {
  int64_t value = 0;
  auto operator<=>(const DayBucket&) const = default;
};
inline DayBucket day_bucket_of(int64_t server_time_ms) {
  return DayBucket{server_time_ms / kDayMs};
}

}  // namespace qim
