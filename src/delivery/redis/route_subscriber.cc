#include "delivery/redis/route_subscriber.h"

#include <spdlog/spdlog.h>

#include "core/thread_name.h"
#include "delivery/redis/route_payload.h"
#include "delivery/redis/signal_payload.h"

namespace qim {

RouteSubscriber::RouteSubscriber(RoutingRedis& redis, std::string gateway_id, DeliveryNotifier& gateway,
                                 RouteSubscriberOptions options)
    : redis_(redis),
      gateway_id_(std::move(gateway_id)),
      channel_(redis.keys().channel(gateway_id_)),
      gateway_(gateway),
      options_(std::move(options)) {}

RouteSubscriber::~RouteSubscriber() {
  stop();
}

Status RouteSubscriber::start() {
  if (thread_.joinable()) return Error(Errc::kInvariant, "route subscriber already started");
  thread_ = std::thread([this] {
    set_thread_name("route-sub");
    run();
  });
  const auto deadline = std::chrono::steady_clock::now() + options_.start_timeout;
  while (!subscribed_.load() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // start-up only
  if (!subscribed_.load())
    return Error(Errc::kTimeout, "routing: gateway " + gateway_id_ + " could not subscribe to " + channel_ +
                                     " on " +
                                     redis_.endpoint(redis_.instance_of_gateway(gateway_id_)).to_string() +
                                     " yet (still trying)");
  return {};
}

void RouteSubscriber::stop() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
}

void RouteSubscriber::break_locked(ShardId shard, bool even_if_never_reported) {
  auto it = ends_.find(shard.value);
  if (it == ends_.end() && !even_if_never_reported) return;
  // An empty range reported unknown: the registry breaks the chain and keeps its end, so the next
  // publication (which continues from that end when nothing was lost) is contiguous again. A shard never
  // reported gets a chain ending at 0 (its next publication may then be a second, harmless, break).
  const MailboxSeq end = it != ends_.end() ? it->second : MailboxSeq{};
  gateway_.range_unknown(shard, end, end);
  ends_[shard.value] = end;
}

void RouteSubscriber::resync_around(std::span<const ShardId> shards, const std::function<void()>& while_held,
                                    const std::string& why) {
  std::lock_guard lock(mu_);
  if (while_held) while_held();
  spdlog::info("routing: gateway {}: {} shard(s) resynced: {}", gateway_id_, shards.size(), why);
  for (ShardId s : shards) break_locked(s, true);
}

void RouteSubscriber::resync_all(const std::string& why) {
  std::lock_guard lock(mu_);
  if (!ends_.empty()) spdlog::info("routing: gateway {}: every shard resynced: {}", gateway_id_, why);
  for (const auto& [shard, end] : ends_) gateway_.range_unknown(ShardId{shard}, end, end);
}

void RouteSubscriber::handle(const std::string& bytes) {
  if (is_signal_payload(bytes)) {
    auto signals = decode_signal_payload(bytes);
    if (!signals.ok()) {
      corrupt_++;
      spdlog::warn("routing: gateway {}: a signal payload does not decode ({}); dropped", gateway_id_,
                   signals.error().message());
      return;
    }
    received_++;
    if (options_.signals == nullptr) return;
    for (Signal& s : *signals) {
      signals_++;
      options_.signals->deliver_signal(s.users, std::make_shared<const std::string>(std::move(s.frame)),
                                       s.except_connection);
    }
    return;
  }
  auto p = decode_route_payload(bytes);
  if (!p.ok()) {
    corrupt_++;
    spdlog::error("routing: gateway {}: a publication does not decode ({}); every shard resynced",
                  gateway_id_, p.error().message());
    resync_all("a corrupt publication");
    return;
  }
  received_++;
  std::lock_guard lock(mu_);
  if (p->unknown) {
    gateway_.range_unknown(p->shard, p->from, p->to);
  } else {
    gateway_.entries_visible(p->shard, p->from, p->to, p->entries);
  }
  ends_[p->shard.value] = p->to;
}

void RouteSubscriber::run() {
  const size_t instance = redis_.instance_of_gateway(gateway_id_);
  const RedisEndpoint endpoint = redis_.endpoint(instance);
  std::string last_error;
  while (!stopping_.load()) {
    auto conn = RedisConnection::open(endpoint, redis_.options().timeouts);
    // Named, so an operator (or a test) can find the gateway's subscription in CLIENT LIST.
    Result<RedisReply> ack = conn.ok() ? (*conn)->run({"CLIENT", "SETNAME", "qim-sub-" + gateway_id_})
                                       : Result<RedisReply>(conn.error());
    if (ack.ok() && !ack->is_error()) ack = (*conn)->run({"SUBSCRIBE", channel_});
    const bool ok = ack.ok() && ack->kind == RedisReply::Kind::kArray && ack->elements.size() == 3 &&
                    ack->elements[0].str == "subscribe";
    if (!ok) {
      const std::string why = ack.ok() ? "unexpected SUBSCRIBE reply " + ack->str : ack.error().to_string();
      if (why != last_error) spdlog::warn("routing: gateway {}: cannot subscribe: {}", gateway_id_, why);
      last_error = why;
      std::this_thread::sleep_for(options_.reconnect_backoff);
      continue;
    }
    last_error.clear();
    // Whatever was published while we were not subscribed is lost: break every followed shard first
    // (publications read from now on come after the break).
    resync_all(subscriptions_.load() == 0 ? "first subscription" : "resubscribed after losing the channel");
    subscriptions_++;
    subscribed_.store(true);
    spdlog::info("routing: gateway {} subscribed to {} on {}", gateway_id_, channel_, endpoint.to_string());
    if (options_.on_subscribed) options_.on_subscribed();
    while (!stopping_.load()) {
      auto msg = (*conn)->read_push(std::chrono::milliseconds(100));
      if (!msg.ok()) {
        spdlog::warn("routing: gateway {}: subscription lost: {}", gateway_id_, msg.error().to_string());
        break;
      }
      if (!*msg) continue;
      const RedisReply& m = **msg;
      if (m.kind == RedisReply::Kind::kArray && m.elements.size() == 3 && m.elements[0].str == "message") {
        handle(m.elements[2].str);
      }
    }
    subscribed_.store(false);
    if (!stopping_.load()) std::this_thread::sleep_for(options_.reconnect_backoff);
  }
}

std::string RouteSubscriber::metrics_text() const {
  std::string out;
  auto counter = [&](const char* name, const char* help, uint64_t v) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n" + name + " " +
           std::to_string(v) + "\n";
  };
  counter("qim_routing_subscriber_received_total", "Publications received on the gateway's channel.",
          received());
  counter("qim_routing_subscriber_corrupt_total", "Publications that did not decode (shards resynced).",
          corrupt_payloads());
  counter("qim_routing_subscriber_signals_total", "Signals received on the gateway's channel.",
          signals_received());
  counter("qim_routing_subscriber_subscriptions_total", "Subscriptions (the first and every resubscription).",
          subscriptions());
  return out;
}

}  // namespace qim
