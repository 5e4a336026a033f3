#include "webhooks/retry_policy.h"

#include <gtest/gtest.h>

#include "core/clock.h"

namespace qim {
namespace {

using std::chrono::milliseconds;

TEST(WebhookRetryPolicy, PausesDoubleUpToTheMaximum) {
  RetryPolicy p;  // 1 s doubling, at most 5 min, for 2 h
  std::vector<int64_t> got;
  for (uint32_t n = 1; n <= 11; ++n) got.push_back(retry_delay(p, n, milliseconds(0))->count());
  EXPECT_EQ(got, (std::vector<int64_t>{1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000, 300000,
                                       300000}));
  EXPECT_EQ(retry_delay(p, 4'000'000'000u, milliseconds(0))->count(), 300000);  // no overflow
}

TEST(WebhookRetryPolicy, TheLastAttemptFallsAtTheRetryTimeThenTheEventIsDeadLettered) {
  RetryPolicy p{milliseconds(1000), milliseconds(8000), milliseconds(10'000)};
  EXPECT_EQ(retry_delay(p, 5, milliseconds(7000))->count(), 3000);
  EXPECT_FALSE(retry_delay(p, 6, milliseconds(10'000)).has_value());
  p.retry_for = milliseconds(0);  // never dead-lettered
  EXPECT_EQ(retry_delay(p, 100, milliseconds(100LL * 86'400'000))->count(), 8000);
}

// The whole schedule on a fake clock: with the defaults, a hook down for an hour gets its event on the
// first attempt after it is back (no dead letter), and the attempts stay few.
TEST(WebhookRetryPolicy, AHookDownForAnHourIsRetriedNotDeadLettered) {
  ManualClock clock(0);
  RetryPolicy p;
  const int64_t back_at = 3'600'000;
  uint32_t attempts = 0;
  for (;;) {
    ++attempts;
    if (clock.now_ms() >= back_at) break;  // this attempt succeeds
    auto d = retry_delay(p, attempts, milliseconds(clock.now_ms()));
    ASSERT_TRUE(d.has_value()) << "dead-lettered after " << clock.now_ms() << " ms";
    clock.advance_ms(d->count());
  }
  EXPECT_LT(clock.now_ms() - back_at, 300'000);  // delivered within one maximal pause of its return
  EXPECT_LT(attempts, 25u);
  std::printf("down for 1 h: delivered at %.1f min, attempt %u\n", clock.now_ms() / 60000.0, attempts);
}

}  // namespace
}  // namespace qim
