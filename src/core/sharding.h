#pragma once
// Which shard and lane a user belongs to: shard = hash(user) mod shard_count, lane = hash(user) mod 64.
// The hash is XXH3-64 of the user id bytes, stable across processes, machines and releases.

#include <cstdint>

#include "core/ids.h"
#include "core/status.h"

namespace qim {

inline constexpr uint32_t kLanes = 64;
inline constexpr uint32_t kMaxShards = 4096;

struct ShardId {
  uint32_t value = 0;
  auto operator<=>(const ShardId&) const = default;
};

struct Lane {
  uint32_t value = 0;
  auto operator<=>(const Lane&) const = default;
};

uint64_t user_hash(const UserId& user);

// The shard map of a deployment (QIM_SHARDS).
class ShardMap {
 public:
  // InvalidArgument unless 1 <= shard_count <= kMaxShards.
  static Result<ShardMap> create(uint32_t shard_count);

  uint32_t shard_count() const { return shard_count_; }
  ShardId shard_of(const UserId& user) const;
  // InvalidArgument if shard >= shard_count.
  Status check(ShardId shard) const;

 private:
  explicit ShardMap(uint32_t n) : shard_count_(n) {}
  uint32_t shard_count_;
};

Lane lane_of(const UserId& user);
// InvalidArgument naming the lane if lane >= 64.
Status check_lane(Lane lane);

}  // namespace qim
