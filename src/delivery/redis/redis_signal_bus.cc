#include "delivery/redis/redis_signal_bus.h"

#include <spdlog/spdlog.h>

#include <map>
#include <unordered_map>

#include "delivery/redis/signal_payload.h"

namespace qim {

RedisSignalBus::RedisSignalBus(RoutingRedis& redis, std::string origin_gateway, size_t max_queued)
    : redis_(redis),
      origin_(std::move(origin_gateway)),
      queue_(
          "signals-redis", [this](std::vector<Signal>& batch) { dispatch(batch); }, max_queued) {}

Result<std::unique_ptr<RedisSignalBus>> RedisSignalBus::create(const RoutingOptions& routing,
                                                               size_t max_queued) {
  QIM_ASSIGN_OR_RETURN(auto redis, RoutingRedis::create(routing));
  RoutingRedis& ref = *redis;
  auto bus = std::make_unique<RedisSignalBus>(ref, std::string(), max_queued);
  bus->owned_ = std::move(redis);
  return bus;
}

RedisSignalBus::~RedisSignalBus() {
  queue_.flush();
}

void RedisSignalBus::send(std::span<const UserId> users, std::string frame, uint64_t except_connection) {
  if (users.empty()) return;
  if (frame.size() > kMaxSignalFrameBytes) {
    spdlog::warn("signals: a frame of {} bytes is over the signal bound; dropped", frame.size());
    return;
  }
  queue_.push(Signal{std::vector<UserId>(users.begin(), users.end()), std::move(frame), except_connection});
}

void RedisSignalBus::dispatch(std::vector<Signal>& batch) {
  // The routes of every user of the batch, one pipeline per routing instance.
  std::vector<std::vector<std::string>> users_by_instance(redis_.size());
  {
    std::unordered_map<std::string, bool> seen;
    for (const Signal& s : batch)
      for (const UserId& u : s.users)
        if (seen.emplace(u.str(), true).second)
          users_by_instance[redis_.instance_of_user(u)].push_back(u.str());
  }
  std::unordered_map<std::string, std::vector<std::string>> routes;  // user -> gateways
  const std::string now = std::to_string(routing_now_ms());
  for (size_t i = 0; i < users_by_instance.size(); ++i) {
    const auto& users = users_by_instance[i];
    if (users.empty()) continue;
    std::vector<RedisCommand> cmds;
    cmds.reserve(users.size());
    for (const auto& u : users)
      cmds.push_back({"ZRANGEBYSCORE", redis_.keys().prefix + "route:" + u, now, "+inf"});
    auto replies = redis_.run(i, cmds);
    if (!replies.ok()) {
      spdlog::warn("signals: route lookup on {} failed, their signals dropped: {}",
                   redis_.endpoint(i).to_string(), replies.error().to_string());
      continue;  // these users' signals are lost (counted below as unrouted)
    }
    for (size_t k = 0; k < users.size(); ++k) {
      const RedisReply& r = (*replies)[k];
      if (r.kind != RedisReply::Kind::kArray) continue;
      for (const auto& g : r.elements) routes[users[k]].push_back(g.str);
    }
  }
  // Per gateway: the batch's signals restricted to that gateway's users.
  std::map<std::string, std::vector<Signal>> per_gateway;
  for (const Signal& s : batch) {
    std::map<std::string, std::vector<UserId>> users_of;
    for (const UserId& u : s.users) {
      auto it = routes.find(u.str());
      if (it == routes.end()) continue;
      for (const auto& g : it->second) users_of[g].push_back(u);
    }
    for (auto& [g, users] : users_of) {
      // A connection id is the origin gateway's; elsewhere it could name somebody else's socket.
      per_gateway[g].push_back(Signal{std::move(users), s.frame, g == origin_ ? s.except_connection : 0});
    }
  }
  std::vector<std::vector<RedisCommand>> cmds_by_instance(redis_.size());
  std::vector<std::vector<size_t>> counts_by_instance(redis_.size());
  for (auto& [g, signals] : per_gateway) {
    const size_t i = redis_.instance_of_gateway(g);
    cmds_by_instance[i].push_back({"PUBLISH", redis_.keys().channel(g), encode_signal_payload(signals)});
    counts_by_instance[i].push_back(signals.size());
  }
  for (size_t i = 0; i < cmds_by_instance.size(); ++i) {
    if (cmds_by_instance[i].empty()) continue;
    auto replies = redis_.run(i, cmds_by_instance[i]);
    for (size_t k = 0; k < cmds_by_instance[i].size(); ++k) {
      const bool ok = replies.ok() && (*replies)[k].kind == RedisReply::Kind::kInteger;
      if (!ok) {
        unpublished_ += counts_by_instance[i][k];
      } else if ((*replies)[k].integer > 0) {
        published_++;
      }
    }
    if (!replies.ok())
      spdlog::warn("signals: publishing on {} failed, signals dropped: {}", redis_.endpoint(i).to_string(),
                   replies.error().to_string());
  }
}

std::string RedisSignalBus::metrics_text() const {
  std::string out = queue_.metrics_text("bus=\"redis\"");
  out +=
      "# HELP qim_signals_unpublished_total Signals lost: the routing Redis did not take them.\n"
      "# TYPE qim_signals_unpublished_total counter\nqim_signals_unpublished_total " +
      std::to_string(unpublished()) + "\n";
  out +=
      "# HELP qim_signals_publications_total Signal payloads published to a listening gateway.\n"
      "# TYPE qim_signals_publications_total counter\nqim_signals_publications_total " +
      std::to_string(published()) + "\n";
  return out;
}

}  // namespace qim
