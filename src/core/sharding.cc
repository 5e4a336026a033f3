#include "core/sharding.h"

#include <xxhash.h>

#include <string>

namespace qim {

uint64_t user_hash(const UserId& user) {
  return XXH3_64bits(user.str().data(), user.str().size());
}

Result<ShardMap> ShardMap::create(uint32_t shard_count) {
  if (shard_count == 0 || shard_count > kMaxShards) {
    return Error(Errc::kInvalidArgument, "shard count must be 1.." + std::to_string(kMaxShards) + ", got " +
                                             std::to_string(shard_count));
  }
  return ShardMap(shard_count);
}

ShardId ShardMap::shard_of(const UserId& user) const {
  return ShardId{static_cast<uint32_t>(user_hash(user) % shard_count_)};
}

Status ShardMap::check(ShardId shard) const {
  if (shard.value >= shard_count_) {
    return Error(Errc::kInvalidArgument, "unknown shard " + std::to_string(shard.value) + " (shard count " +
                                             std::to_string(shard_count_) + ")");
  }
  return {};
}

Lane lane_of(const UserId& user) {
  return Lane{static_cast<uint32_t>(user_hash(user) % kLanes)};
}

Status check_lane(Lane lane) {
  if (lane.value >= kLanes) {
    return Error(Errc::kInvalidArgument, "unknown lane " + std::to_string(lane.value) + " (lanes are 0..63)");
  }
  return {};
}

}  // namespace qim
