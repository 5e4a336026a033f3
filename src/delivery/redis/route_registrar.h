#pragma once
// The gateway's routes in the routing Redis (routing_options.h for the keys): per user with live
// connections here, this gateway's id in the user's route set with an expiry; this gateway's id in the
// gateway registry (every instance). A refresh thread renews both every `refresh_interval`, so a gateway
// that dies leaves routes that vanish after the route TTL, and a routing instance that restarted gets
// them back.
//
// A route found missing at a refresh (expired because refreshes failed, an instance restarted empty, or
// never written because Redis was down at AUTH) means frontier moves may have gone by without this
// gateway. The route is written again through `on_routes_lost(users, rewrite)`, which must call
// `rewrite()` and then break those users' chains, with no publication handed to the gateway in between
// (RouteSubscriber::resync_around does exactly that): a push looked up after the rewrite must not reach
// the users with their old chain point (it would claim the entries that went by unrouted), and the
// SYNC_NEEDED must follow the rewrite (so the client's SYNC reads after every move that missed the
// route). Thread-safe.

#include <condition_variable>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "delivery/redis/routing_redis.h"
#include "gateway/route_registrar.h"

namespace qim {

struct RouteRegistrarOptions {
  std::chrono::milliseconds refresh_interval{0};  // 0: a third of the route TTL
  // Unset: the routes are simply written again (nobody to tell).
  std::function<void(std::span<const UserId>, const std::function<void()>& rewrite)> on_routes_lost;
};

class RedisRouteRegistrar final : public RouteRegistrar {
 public:
  // `redis` must outlive this object; the gateway id and TTL are redis.options()'.
  RedisRouteRegistrar(RoutingRedis& redis, RouteRegistrarOptions options = {});
  ~RedisRouteRegistrar() override;
  RedisRouteRegistrar(const RedisRouteRegistrar&) = delete;
  RedisRouteRegistrar& operator=(const RedisRouteRegistrar&) = delete;

  // Registers the gateway (every instance that answers) and starts the refresh thread. Transport or
  // Timeout if no routing instance answers (the thread is not started then).
  Status start();
  // Stops refreshing. `remove_routes`: also deletes this gateway's routes and registry entry (a clean
  // shutdown); false leaves them to expire (what a crash does).
  void stop(bool remove_routes = true);

  void connection_authenticated(const UserId& user) override;
  void connection_closed(const UserId& user) override;

  // Wakes the refresh thread now (e.g. after the subscription came back: an instance may have restarted).
  void refresh_soon();
  // One refresh round, on the caller's thread. The first error (the round goes on past it).
  Status refresh_now();

  const std::string& gateway_id() const { return redis_.options().gateway_id; }
  size_t users() const;
  uint64_t routes_lost() const;  // users found missing at refreshes, in total

 private:
  struct UserRoutes {
    UserId user;
    uint32_t connections = 0;
    bool written = false;  // the route is known to be in Redis (else the next refresh writes it)
  };
  // Writes the routes of `users` (one pipeline per instance). Requires mu_. Marks them written on success.
  Status write_routes_locked(const std::vector<UserRoutes*>& users);
  Status remove_routes_locked(const std::vector<UserId>& users);
  Status register_gateway();
  void run();

  RoutingRedis& redis_;
  RouteRegistrarOptions options_;
  mutable std::mutex mu_;  // held across the Redis writes of routes, so they happen in the order decided
  std::unordered_map<std::string, UserRoutes> users_;
  std::vector<UserId> removals_;     // last connections closed, routes to delete (by the refresh thread)
  int64_t redis_down_until_ms_ = 0;  // after a failure, AUTHs skip the write until then (the refresh heals)
  uint64_t lost_ = 0;
  std::mutex wake_mu_;
  std::condition_variable wake_;
  bool wake_now_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace qim
