#include "gateway/token_bucket.h"

#include <gtest/gtest.h>

namespace qim {
namespace {

TEST(TokenBucket, AllowsABurstThenRefillsAtTheRate) {
  auto t0 = std::chrono::steady_clock::time_point{};
  TokenBucket b(10, 3, t0);
  EXPECT_TRUE(b.take(t0));
  EXPECT_TRUE(b.take(t0));
  EXPECT_TRUE(b.take(t0));
  EXPECT_FALSE(b.take(t0));
  EXPECT_FALSE(b.take(t0 + std::chrono::milliseconds(50)));  // half a token
  EXPECT_TRUE(b.take(t0 + std::chrono::milliseconds(100)));
  EXPECT_FALSE(b.take(t0 + std::chrono::milliseconds(100)));
  // Never more than the burst, however long it idles.
  auto later = t0 + std::chrono::hours(1);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(b.take(later));
  EXPECT_FALSE(b.take(later));
}

}  // namespace
}  // namespace qim
