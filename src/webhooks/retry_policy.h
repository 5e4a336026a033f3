#pragma once
// How long and how often an event the hook did not acknowledge is tried again before it goes to the
// dead-letter log (docs/webhooks.md "Delivery"). Exponential back-off without jitter: one consumer thread
// per Outbox partition delivers in order, so there is no herd of retries to spread; the pauses double from
// `initial` up to `max_delay`, and the event is tried for `retry_for` after its first attempt (the last
// attempt falls at retry_for exactly), then dead-lettered. retry_for 0: never dead-lettered (the partition
// waits for the hook however long it is down).

#include <chrono>
#include <cstdint>
#include <optional>

namespace qim {

struct RetryPolicy {
  std::chrono::milliseconds initial{1000};       // QIM_WEBHOOK_RETRY_INITIAL_MS
  std::chrono::milliseconds max_delay{300'000};  // QIM_WEBHOOK_RETRY_MAX_MS: 5 min
  // QIM_WEBHOOK_RETRY_FOR_MS: 2 h, so a hook down for an hour gets every event in order, late, and none
  // is dead-lettered.
  std::chrono::milliseconds retry_for{std::chrono::hours(2)};
};

// The pause before the next attempt of an event whose `failed_attempts` (>= 1) attempts all failed, the
// first of them `elapsed` ago; nullopt when the event is to be dead-lettered now (elapsed >= retry_for).
std::optional<std::chrono::milliseconds> retry_delay(const RetryPolicy& policy, uint32_t failed_attempts,
                                                     std::chrono::milliseconds elapsed);

}  // namespace qim
