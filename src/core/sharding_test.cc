#include "core/sharding.h"

#include <gtest/gtest.h>

#include <set>

namespace qim {

TEST(Sharding, ShardAndLaneAreHashModulo) {
  auto map = *ShardMap::create(16);
  auto u = *UserId::parse("alice");
  EXPECT_EQ(map.shard_of(u).value, user_hash(u) % 16);
  EXPECT_EQ(lane_of(u).value, user_hash(u) % 64);
}

TEST(Sharding, SpreadsUsersOverShards) {
  auto map = *ShardMap::create(8);
  std::set<uint32_t> seen;
  for (int i = 0; i < 200; ++i) seen.insert(map.shard_of(*UserId::parse("u" + std::to_string(i))).value);
  EXPECT_EQ(seen.size(), 8u);
}

TEST(Sharding, RefusesBadShardCountsAndLanes) {
  EXPECT_EQ(ShardMap::create(0).code(), Errc::kInvalidArgument);
  EXPECT_EQ(ShardMap::create(kMaxShards + 1).code(), Errc::kInvalidArgument);
  auto map = *ShardMap::create(4);
  EXPECT_EQ(map.check(ShardId{4}).code(), Errc::kInvalidArgument);
  EXPECT_TRUE(map.check(ShardId{3}).ok());
  EXPECT_EQ(check_lane(Lane{64}).code(), Errc::kInvalidArgument);
  EXPECT_TRUE(check_lane(Lane{63}).ok());
}

}  // namespace qim
