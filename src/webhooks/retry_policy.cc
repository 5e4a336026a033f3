#include "webhooks/retry_policy.h"

#include <algorithm>

namespace qim {

std::optional<std::chrono::milliseconds> retry_delay(const RetryPolicy& policy, uint32_t failed_attempts,
                                                     std::chrono::milliseconds elapsed) {
  using std::chrono::milliseconds;
  const bool forever = policy.retry_for.count() == 0;
  if (!forever && elapsed >= policy.retry_for) return std::nullopt;
  // initial * 2^(n-1), computed without overflow: past 2^30 the cap has long been reached.
  const uint32_t doublings = std::min<uint32_t>(failed_attempts > 0 ? failed_attempts - 1 : 0, 30);
  const auto base = std::max<int64_t>(policy.initial.count(), 1);
  milliseconds d{std::min<int64_t>(base << doublings, std::max<int64_t>(policy.max_delay.count(), base))};
  if (!forever) d = std::min(d, policy.retry_for - elapsed);
  return d;
}

}  // namespace qim
