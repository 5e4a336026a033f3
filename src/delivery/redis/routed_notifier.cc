#include "delivery/redis/routed_notifier.h"

#include <spdlog/spdlog.h>

#include <set>
#include <unordered_set>

#include "core/thread_name.h"
#include "delivery/redis/route_payload.h"

namespace qim {

RoutedNotifier::RoutedNotifier(RoutingRedis& redis, RoutedNotifierOptions options)
    : redis_(redis),
      options_(options),
      publisher_(redis),
      fan_in_(std::vector<DeliveryNotifier*>{&publisher_}, options.max_queued_entries) {
  retry_ = std::thread([this] {
    set_thread_name("route-retry");
    retry_loop();
  });
}

RoutedNotifier::RoutedNotifier(std::unique_ptr<RoutingRedis> owned, RoutedNotifierOptions options)
    : RoutedNotifier(*owned, options) {
  owned_redis_ = std::move(owned);
}

Result<std::unique_ptr<RoutedNotifier>> RoutedNotifier::create(const RoutingOptions& routing,
                                                               RoutedNotifierOptions options) {
  QIM_ASSIGN_OR_RETURN(auto redis, RoutingRedis::create(routing));
  return std::unique_ptr<RoutedNotifier>(new RoutedNotifier(std::move(redis), options));
}

RoutedNotifier::~RoutedNotifier() {
  {
    std::lock_guard lock(retry_mu_);
    stopping_ = true;
  }
  retry_cv_.notify_all();
  retry_.join();
  // fan_in_ is destroyed next (it hands over what is queued), then publisher_.
}

void RoutedNotifier::entries_visible(ShardId shard, MailboxSeq from, MailboxSeq to,
                                     std::span<const MailboxEntry> entries) {
  fan_in_.entries_visible(shard, from, to, entries);
}

void RoutedNotifier::range_unknown(ShardId shard, MailboxSeq from, MailboxSeq to) {
  fan_in_.range_unknown(shard, from, to);
}

RoutedNotifier::Counters RoutedNotifier::counters() const {
  return Counters{publisher_.publications.load(), publisher_.unsubscribed.load(),
                  publisher_.lost_reports.load(), publisher_.unknown_broadcasts.load(),
                  fan_in_.dropped_entries(),      publisher_.pending_shards().size()};
}

std::string RoutedNotifier::metrics_text() const {
  const Counters c = counters();
  std::string out;
  auto counter = [&](const char* name, const char* help, uint64_t v) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n" + name + " " +
           std::to_string(v) + "\n";
  };
  counter("qim_routing_publications_total", "Frontier moves published to a subscribed gateway.",
          c.publications);
  counter("qim_routing_unsubscribed_total", "Publications no gateway subscriber received.", c.unsubscribed);
  counter("qim_routing_lost_reports_total", "Reports not published (Redis unreachable); sent on as unknown.",
          c.lost_reports);
  counter("qim_routing_unknown_broadcasts_total", "Range-unknown reports sent to every live gateway.",
          c.unknown_broadcasts);
  counter("qim_routing_dropped_entries_total",
          "Entries dropped by the bounded queue (ranges sent as unknown).", c.dropped_entries);
  return out;
}

void RoutedNotifier::retry_loop() {
  std::unique_lock lock(retry_mu_);
  while (!stopping_) {
    retry_cv_.wait_for(lock, options_.retry_interval, [&] { return stopping_; });
    if (stopping_) return;
    if (!publisher_.has_pending()) continue;
    // An empty range reported unknown reaches the publisher, on its own thread, as "try the pending
    // broadcast again" (it extends nothing).
    for (ShardId shard : publisher_.pending_shards())
      fan_in_.range_unknown(shard, MailboxSeq{}, MailboxSeq{});
  }
}

// ------------------------------------------------------------------------------------------ publisher

std::vector<ShardId> RoutedNotifier::Publisher::pending_shards() const {
  std::lock_guard lock(pending_mu_);
  std::vector<ShardId> out;
  for (const auto& [shard, lost] : pending_) out.push_back(ShardId{shard});
  return out;
}

void RoutedNotifier::Publisher::lose(ShardId shard, MailboxSeq from, MailboxSeq to) {
  {
    std::lock_guard lock(pending_mu_);
    auto [it, fresh] = pending_.try_emplace(shard.value, Lost{from, to});
    if (!fresh) {
      if (from < it->second.from) it->second.from = from;
      if (it->second.to < to) it->second.to = to;
    }
    pending_count_.store(pending_.size());
  }
  // No gateway's chain point of this shard can be trusted any more: its next report starts a new chain.
  for (auto& [gateway, points] : chains_) points[shard.value] = std::nullopt;
  base_.erase(shard.value);
}

MailboxSeq RoutedNotifier::Publisher::from_for(const std::string& gateway, ShardId shard,
                                               MailboxSeq report_from) {
  auto g = chains_.find(gateway);
  if (g != chains_.end()) {
    auto point = g->second.find(shard.value);
    if (point != g->second.end()) return point->second ? *point->second : report_from;
  }
  auto base = base_.find(shard.value);
  return base != base_.end() ? base->second : report_from;
}

Result<std::vector<std::string>> RoutedNotifier::Publisher::live_gateways() {
  // Every gateway registers on every instance: any instance that answers knows them all (the union
  // covers an instance that restarted and has not been refreshed yet).
  std::set<std::string> live;
  std::optional<Error> last_error;
  bool answered = false;
  const std::string now = std::to_string(routing_now_ms());
  for (size_t i = 0; i < redis_.size(); ++i) {
    RedisCommand cmd{"ZRANGEBYSCORE", redis_.keys().gateways(), now, "+inf"};
    auto replies = redis_.run(i, std::span(&cmd, 1));
    if (!replies.ok()) {
      last_error = replies.error();
      continue;
    }
    const RedisReply& r = replies->front();
    if (r.kind != RedisReply::Kind::kArray) {
      last_error =
          Error(Errc::kTransport, "redis " + redis_.endpoint(i).to_string() +
                                      ": gateway registry: " + (r.is_error() ? r.str : "unexpected reply"));
      continue;
    }
    answered = true;
    for (const auto& e : r.elements) live.insert(e.str);
  }
  if (!answered) return *last_error;
  return std::vector<std::string>(live.begin(), live.end());
}

bool RoutedNotifier::Publisher::broadcast_pending(ShardId shard) {
  Lost lost;
  {
    std::lock_guard lock(pending_mu_);
    auto it = pending_.find(shard.value);
    if (it == pending_.end()) return true;
    lost = it->second;
  }
  auto live = live_gateways();
  if (!live.ok()) {
    spdlog::warn("routing: shard {}: range unknown ({}, {}] not sent yet: {}", shard.value,
                 lost.from.to_string(), lost.to.to_string(), live.error().to_string());
    return false;
  }
  RoutePayload p;
  p.unknown = true;
  p.shard = shard;
  p.from = lost.from;
  p.to = lost.to;
  const std::string payload = encode_route_payload(p);
  std::vector<std::vector<std::string>> by_instance(redis_.size());
  for (const auto& g : *live) by_instance[redis_.instance_of_gateway(g)].push_back(g);
  bool all_sent = true;
  for (size_t i = 0; i < by_instance.size(); ++i) {
    if (by_instance[i].empty()) continue;
    std::vector<RedisCommand> cmds;
    for (const auto& g : by_instance[i]) cmds.push_back({"PUBLISH", redis_.keys().channel(g), payload});
    auto replies = redis_.run(i, cmds);
    if (!replies.ok()) {
      spdlog::warn("routing: shard {}: range unknown not sent: {}", shard.value, replies.error().to_string());
      all_sent = false;
      continue;
    }
    for (size_t k = 0; k < cmds.size(); ++k) {
      const RedisReply& r = (*replies)[k];
      if (r.kind == RedisReply::Kind::kInteger && r.integer > 0) {
        chains_[by_instance[i][k]][shard.value] = lost.to;
        unknown_broadcasts++;
      } else {
        all_sent = all_sent && r.kind == RedisReply::Kind::kInteger;  // an error reply: try again
        unsubscribed++;
        poison(by_instance[i][k], shard);
      }
    }
  }
  if (!all_sent) {
    for (auto& [gateway, points] : chains_) points[shard.value] = std::nullopt;
    return false;
  }
  // Gateways that are not live any more are forgotten (they re-register under the same id if they return,
  // and their first report then starts a new chain).
  std::set<std::string> live_set(live->begin(), live->end());
  std::erase_if(chains_, [&](const auto& kv) { return !live_set.contains(kv.first); });
  base_[shard.value] = lost.to;
  std::lock_guard lock(pending_mu_);
  pending_.erase(shard.value);
  pending_count_.store(pending_.size());
  return true;
}

void RoutedNotifier::Publisher::range_unknown(ShardId shard, MailboxSeq from, MailboxSeq to) {
  if (!(from < to)) {
    // The retry thread's nudge: only a pending broadcast to try again.
    broadcast_pending(shard);
    return;
  }
  lose(shard, from, to);
  broadcast_pending(shard);
}

void RoutedNotifier::Publisher::entries_visible(ShardId shard, MailboxSeq from, MailboxSeq to,
                                                std::span<const MailboxEntry> entries) {
  if (!broadcast_pending(shard)) {
    lost_reports++;
    lose(shard, from, to);
    return;
  }
  base_.try_emplace(shard.value, from);  // the shard's first report: nothing was lost before it
  if (entries.empty()) return;           // a move over refused records: nothing for anybody (chains collapse)

  // The routes of the users in the report, one pipeline per routing instance.
  std::vector<std::vector<std::string>> users_by_instance(redis_.size());
  {
    std::unordered_set<std::string> seen;
    for (const auto& e : entries) {
      if (seen.insert(e.user.str()).second)
        users_by_instance[redis_.instance_of_user(e.user)].push_back(e.user.str());
    }
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
    std::string why;
    if (!replies.ok()) {
      why = replies.error().to_string();
    } else {
      for (size_t k = 0; k < users.size() && why.empty(); ++k) {
        const RedisReply& r = (*replies)[k];
        if (r.kind != RedisReply::Kind::kArray) {
          why = "route lookup: " + (r.is_error() ? r.str : std::string("unexpected reply"));
          break;
        }
        for (const auto& g : r.elements) routes[users[k]].push_back(g.str);
      }
    }
    if (!why.empty()) {
      spdlog::warn("routing: shard {}: ({}, {}] not published, sent on as unknown: {}", shard.value,
                   from.to_string(), to.to_string(), why);
      lost_reports++;
      lose(shard, from, to);
      return;
    }
  }

  // Each gateway gets its users' entries only, in the report's (ascending) order.
  std::map<std::string, std::vector<MailboxEntry>> per_gateway;
  for (const auto& e : entries) {
    auto it = routes.find(e.user.str());
    if (it == routes.end()) continue;
    for (const auto& g : it->second) per_gateway[g].push_back(e);
  }
  std::vector<std::vector<std::string>> gateways_by_instance(redis_.size());
  std::vector<std::vector<RedisCommand>> cmds_by_instance(redis_.size());
  for (auto& [g, list] : per_gateway) {
    RoutePayload p;
    p.shard = shard;
    p.from = from_for(g, shard, from);  // collapses the ranges it had nothing in
    p.to = to;
    p.entries = std::move(list);
    const size_t i = redis_.instance_of_gateway(g);
    gateways_by_instance[i].push_back(g);
    cmds_by_instance[i].push_back({"PUBLISH", redis_.keys().channel(g), encode_route_payload(p)});
  }
  for (size_t i = 0; i < cmds_by_instance.size(); ++i) {
    if (cmds_by_instance[i].empty()) continue;
    auto replies = redis_.run(i, cmds_by_instance[i]);
    bool failed = !replies.ok();
    for (size_t k = 0; !failed && k < replies->size(); ++k) failed = (*replies)[k].is_error();
    if (failed) {
      // Some of these may have arrived: every gateway's next report of the shard must start a new chain.
      spdlog::warn("routing: shard {}: ({}, {}] not published to some gateways, sent on as unknown: {}",
                   shard.value, from.to_string(), to.to_string(),
                   replies.ok() ? "error reply" : replies.error().to_string());
      lost_reports++;
      lose(shard, from, to);
      continue;
    }
    for (size_t k = 0; k < replies->size(); ++k) {
      const std::string& g = gateways_by_instance[i][k];
      if ((*replies)[k].integer > 0) {
        publications++;
        chains_[g][shard.value] = to;
      } else {
        // Nobody listens on the gateway's channel (it is gone, or resubscribing: it then tells its users
        // to SYNC). Its next report of the shard starts a new chain.
        unsubscribed++;
        poison(g, shard);
      }
    }
  }
}

}  // namespace qim
