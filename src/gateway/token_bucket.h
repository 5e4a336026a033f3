#pragma once
// A token bucket: `rate` tokens per second up to `burst`. Time is passed in, so tests drive it by hand.

#include <algorithm>
#include <chrono>

namespace qim {

class TokenBucket {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  TokenBucket(double rate_per_second, double burst, TimePoint now)
      : rate_(rate_per_second), burst_(burst), tokens_(burst), last_(now) {}

  // Takes one token if there is one; false means "over the rate, refuse this one".
  bool take(TimePoint now) {
    double elapsed = std::chrono::duration<double>(now - last_).count();
    if (elapsed > 0) {
      tokens_ = std::min(burst_, tokens_ + elapsed * rate_);
      last_ = now;
    }
    if (tokens_ < 1.0) return false;
    tokens_ -= 1.0;
    return true;
  }

 private:
  double rate_;
  double burst_;
  double tokens_;
  TimePoint last_;
};

}  // namespace qim
