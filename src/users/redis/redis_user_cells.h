#pragma once
// The user registry's cells in the routing Redis (users/user_registry.h; docs/adr/0149): what the gateways
// of a distributed deployment share with QIM_USER_REGISTRY=1. Keys, all on routing instance 0 (the
// registry is deployment-wide, like the revocation log):
//   <prefix>users          hash: "u/<user>" -> the encoded record (encode_user_record), whose stamp a Lua
//                          compare-and-set keeps last-writer-wins: replaced only by a later stamp
//   <prefix>users:seq      counter: writes so far
//   <prefix>users:log      sorted set: "u/<user>" -> the seq of its last write (one member per user ever
//                          written), what changed_since() reads to follow the other gateways' writes
// Like the revocation marks, the cells must survive a restart of the routing Redis (appendonly yes). One
// that restarted empty has forgotten every user; its counter behind a follower's cursor makes the
// follower reload (changed_since answers `everything`).

#include <memory>

#include "delivery/redis/routing_redis.h"
#include "users/user_registry.h"

namespace qim {

class RedisUserCells final : public UserCells {
 public:
  // `redis` must outlive the cells.
  explicit RedisUserCells(RoutingRedis& redis) : redis_(redis) {}
  // The same over routing instances of its own (a gateway alone, tests).
  static Result<std::unique_ptr<RedisUserCells>> create(const RoutingOptions& options);

  // Transport when the instance cannot be reached or answers an error.
  Result<bool> put(const std::string& key, int64_t stamp, const std::string& value) override;
  // One script run (atomic): the counter and the cells written after `cursor`.
  Result<UserCellChanges> changed_since(int64_t cursor) override;

 private:
  std::string key(std::string_view suffix) const;

  std::unique_ptr<RoutingRedis> owned_;
  RoutingRedis& redis_;
};

}  // namespace qim
