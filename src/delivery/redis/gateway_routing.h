#pragma once
// What a gateway process wires for delivery across gateways, in one object: the routing instances, the
// route registrar (GatewayDeps::routes) and the subscription to the gateway's channel, connected so a
// route found missing is rewritten and its users' shards' chains broken with no publication handed on
// in between (route_registrar.h), and a resubscription makes
// the registrar refresh at once (an instance that dropped the subscription may have restarted empty).
//
//   auto routing = GatewayRouting::create(routing_options, shard_count).value();
//   deps.routes = &routing->registrar();
//   auto gateway = make_gateway(options, deps);
//   routing->start(gateway->notifier());   // before gateway->start(): subscribed before AUTHs come
//   ...
//   gateway->stop(); routing->stop();
#include <memory>

#include "delivery/redis/route_registrar.h"
#include "delivery/redis/route_subscriber.h"

namespace qim {

struct GatewayRoutingOptions {
  RouteSubscriberOptions subscriber;              // on_subscribed is set by GatewayRouting
  std::chrono::milliseconds refresh_interval{0};  // 0: a third of the route TTL
};

class GatewayRouting {
 public:
  // Config error for bad endpoints or a shard count out of range.
  static Result<std::unique_ptr<GatewayRouting>> create(RoutingOptions options, uint32_t shard_count,
                                                        GatewayRoutingOptions extra = {});
  ~GatewayRouting();

  RouteRegistrar& registrar() { return *registrar_; }
  RedisRouteRegistrar& redis_registrar() { return *registrar_; }
  RouteSubscriber* subscriber() { return subscriber_.get(); }
  const std::string& gateway_id() const { return redis_->options().gateway_id; }

  // Subscribes and hands publications to `gateway` (which must outlive stop()), then registers the
  // gateway and starts refreshing. Transport/Timeout if no routing instance answers, or Timeout if the
  // first subscription did not come within the start timeout (it keeps trying; stop() ends it).
  // `signals` (optional): where signal payloads go (the gateway's signal_sink()).
  Status start(DeliveryNotifier& gateway, SignalSink* signals = nullptr);
  // The routing instances (e.g. for a RedisSignalBus or the presence exchange of this gateway).
  RoutingRedis& redis() { return *redis_; }
  // Stops the subscription and the refreshes; `remove_routes` false leaves the routes to expire.
  void stop(bool remove_routes = true);
  // Prometheus text: the subscriber's counters and qim_routing_routes_lost_total.
  std::string metrics_text() const;

 private:
  GatewayRouting(std::unique_ptr<RoutingRedis> redis, ShardMap shards, GatewayRoutingOptions extra);

  std::unique_ptr<RoutingRedis> redis_;
  const ShardMap shards_;
  GatewayRoutingOptions extra_;
  std::unique_ptr<RedisRouteRegistrar> registrar_;
  std::unique_ptr<RouteSubscriber> subscriber_;
};

}  // namespace qim
