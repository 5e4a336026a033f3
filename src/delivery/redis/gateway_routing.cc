#include "delivery/redis/gateway_routing.h"

#include <set>

namespace qim {

Result<std::unique_ptr<GatewayRouting>> GatewayRouting::create(RoutingOptions options, uint32_t shard_count,
                                                               GatewayRoutingOptions extra) {
  QIM_ASSIGN_OR_RETURN(ShardMap shards, ShardMap::create(shard_count));
  if (options.gateway_id.empty()) options.gateway_id = default_gateway_id();
  QIM_ASSIGN_OR_RETURN(auto redis, RoutingRedis::create(options));
  return std::unique_ptr<GatewayRouting>(new GatewayRouting(std::move(redis), shards, std::move(extra)));
}

GatewayRouting::GatewayRouting(std::unique_ptr<RoutingRedis> redis, ShardMap shards,
                               GatewayRoutingOptions extra)
    : redis_(std::move(redis)), shards_(shards), extra_(std::move(extra)) {
  RouteRegistrarOptions ro;
  ro.refresh_interval = extra_.refresh_interval;
  ro.on_routes_lost = [this](std::span<const UserId> users, const std::function<void()>& rewrite) {
    if (!subscriber_) {
      rewrite();
      return;
    }
    std::set<uint32_t> seen;
    std::vector<ShardId> shards;
    for (const auto& u : users) {
      const ShardId s = shards_.shard_of(u);
      if (seen.insert(s.value).second) shards.push_back(s);
    }
    subscriber_->resync_around(shards, rewrite,
                               std::to_string(users.size()) + " route(s) were missing in the routing Redis");
  };
  registrar_ = std::make_unique<RedisRouteRegistrar>(*redis_, std::move(ro));
}

GatewayRouting::~GatewayRouting() {
  stop(false);
}

Status GatewayRouting::start(DeliveryNotifier& gateway, SignalSink* signals) {
  if (subscriber_) return Error(Errc::kInvariant, "gateway routing already started");
  // The subscription first: the gateway is listed (and receives broadcasts) once it listens. The
  // registrar's thread starts after subscriber_ is set (it reads it in on_routes_lost).
  RouteSubscriberOptions so = extra_.subscriber;
  RedisRouteRegistrar* registrar = registrar_.get();
  so.on_subscribed = [registrar] { registrar->refresh_soon(); };
  so.signals = signals;
  subscriber_ = std::make_unique<RouteSubscriber>(*redis_, gateway_id(), gateway, std::move(so));
  Status subscribed = subscriber_->start();
  QIM_RETURN_IF_ERROR(registrar_->start());
  return subscribed;
}

void GatewayRouting::stop(bool remove_routes) {
  if (subscriber_) subscriber_->stop();
  registrar_->stop(remove_routes);
}

std::string GatewayRouting::metrics_text() const {
  std::string out = subscriber_ ? subscriber_->metrics_text() : std::string();
  out +=
      "# HELP qim_routing_routes_lost_total Routes found missing at a refresh (their users resynced).\n"
      "# TYPE qim_routing_routes_lost_total counter\nqim_routing_routes_lost_total " +
      std::to_string(registrar_->routes_lost()) + "\n";
  return out;
}

}  // namespace qim
