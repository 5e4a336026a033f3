#pragma once
// The PresenceExchange of a distributed deployment, in the routing Redis (docs/adr/0081). Per user, on
// the instance of the user (instance_of_user, as their routes):
//
//   <prefix>presence:<user>   sorted set: gateway id -> expiry (ms); the gateways holding the user online.
//                             Refreshed by each gateway every refresh interval; key TTL = route TTL.
//   <prefix>pinfo:<user>      hash: seen (last seen, ms), privacy (e/c/n); TTL 30 days.
//   <prefix>presence-ch:<user>  the user's pub/sub channel: one PUBLISH per change of the user.
//
// A change is decided by one Lua script on the user's instance: went_online adds this gateway and
// publishes "online" only if no other live gateway held the user; went_offline removes it and publishes
// "offline" (and writes last seen) only if none is left. So two gateways racing cannot both announce,
// and a user with devices on three gateways is online while any holds one.
//
// Each gateway subscribes to the channels of the users its connections watch (watch(); SUBSCRIBE and
// UNSUBSCRIBE on one connection per instance, on the exchange's thread), so one change costs one PUBLISH
// and reaches only the gateways that care. Payload: "<t|p> <e|c|n> <1|0> <seen ms|->" (t: online/offline
// change, p: privacy only).
//
// Limits (docs/adr/0081): a gateway that dies without announcing leaves its users "online" in the set until
// their entry expires (route TTL): PRESENCE_STATE reads are right from then on, but no PRESENCE "offline"
// is pushed for them. A resubscription re-subscribes every channel; changes published in between are lost
// for pushes (reads stay right).

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "delivery/redis/routing_redis.h"
#include "presence/presence_exchange.h"

namespace qim {

class RedisPresenceExchange final : public PresenceExchange {
 public:
  // `redis` must outlive the exchange. `gateway_id`: this gateway's (its member in presence:<user>).
  RedisPresenceExchange(RoutingRedis& redis, std::string gateway_id);
  ~RedisPresenceExchange() override;

  // Starts the subscription thread (one connection per routing instance, reconnecting on loss).
  void start();
  void stop();

  void add_listener(const void* owner, Listener listener) override;
  void remove_listener(const void* owner) override;
  void watch(const UserId& user, bool on) override;
  Status went_online(const UserId& user, PresencePrivacy privacy) override;
  Status went_offline(const UserId& user, PresencePrivacy privacy, int64_t at_ms) override;
  Status privacy_changed(const UserId& user, PresencePrivacy privacy) override;
  Status refresh(std::span<const UserId> users) override;
  Result<std::vector<PresenceRecord>> records(std::span<const UserId> users) override;

  uint64_t changes_received() const { return received_.load(); }
  size_t channels() const;  // users watched here

 private:
  std::string key(std::string_view kind, const UserId& user) const;
  Status run_script(const UserId& user, const char* script, std::vector<std::string> keys,
                    std::vector<std::string> args);
  void run();
  void handle(const std::string& channel, const std::string& payload);

  RoutingRedis& redis_;
  const std::string gateway_id_;
  std::mutex listeners_mu_;  // held while calling them
  std::vector<std::pair<const void*, Listener>> listeners_;
  mutable std::mutex mu_;
  std::set<std::string> watched_;  // users
  // Per instance: channels to (un)subscribe on the next turn of the thread.
  std::vector<std::vector<std::pair<std::string, bool>>> pending_;
  // watch() calls so far, and how many of them the thread has applied (SUBSCRIBE acknowledged): records()
  // waits (briefly) for the ones asked before it, so a change right after a PRESENCE_STATE is not missed.
  uint64_t requested_ = 0, applied_ = 0;
  std::condition_variable applied_cv_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> received_{0};
  std::thread thread_;
};

}  // namespace qim
