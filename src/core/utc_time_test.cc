#include "core/utc_time.h"

#include <gtest/gtest.h>

namespace qim {
namespace {

TEST(UtcTime, FromEpochMilliseconds) {
  EXPECT_EQ(utc_time(0), "1970-01-01 00:00:00 UTC");
  EXPECT_EQ(utc_time(1796002831996), "2026-11-30 01:40:31 UTC");
  EXPECT_EQ(utc_time(-1), "1969-12-31 23:59:59 UTC");
  EXPECT_EQ(utc_time(INT64_MAX), "9223372036854775807 ms since the epoch");
}

}  // namespace
}  // namespace qim
