#pragma once
// The SessionStore of the distributed deployment (session_store.h), in the routing Redis every gateway
// reads (delivery/redis/routing_options.h for the prefix). Keys:
//   <prefix>revoked:<user>      hash on the user's instance: "*" -> the user's not_before, "d:<device>" ->
//                               the device's (ms since the epoch); raised only (a Lua max), never expires
//   <prefix>devices:<user>      hash on the user's instance: device -> last AUTH (ms); expires 30 days after
//                               the last AUTH
//   <prefix>live:<user>         hash on the user's instance: "<gateway id>|<device>" -> open connections;
//                               fields of a gateway no longer in <prefix>gateways (dead) are not counted
//   <prefix>revocations:seq     counter on instance 0: revocations so far
//   <prefix>revocations         sorted set on instance 0: user -> the seq of its last revocation (the last
//                               10,000 kept): what RevocationWatcher reads
// Revocations must survive a restart of the routing Redis: run it with persistence (appendonly yes;
// docs/operations.md "Sessions"). One that restarted empty has forgotten them.

#include <memory>
#include <string>

#include "delivery/redis/routing_redis.h"
#include "sessions/session_store.h"

namespace qim {

class RedisSessionStore final : public SessionStore {
 public:
  // `redis` must outlive the store; `gateway_id`: the gateway this process runs (for live counts; empty in
  // a process without a gateway, which only revokes and lists).
  RedisSessionStore(RoutingRedis& redis, std::string gateway_id)
      : redis_(redis), gateway_id_(std::move(gateway_id)) {}
  // The same over routing instances of its own (`qim admin sessions` without an admin port).
  static Result<std::unique_ptr<RedisSessionStore>> create(const RoutingOptions& options);

  Result<RevocationMarks> marks(const UserId& user) override;
  Status revoke(const UserId& user, const std::optional<DeviceId>& device, int64_t not_before_ms) override;
  Result<RevocationChanges> changes_since(std::optional<uint64_t> cursor) override;
  void connection_opened(const UserId& user, const DeviceId& device, int64_t at_ms) override;
  void connection_closed(const UserId& user, const DeviceId& device) override;
  Result<std::vector<DeviceSession>> devices(const UserId& user) override;

 private:
  std::string key(std::string_view what, const UserId& user) const;

  std::unique_ptr<RoutingRedis> owned_;
  RoutingRedis& redis_;
  const std::string gateway_id_;
};

}  // namespace qim
