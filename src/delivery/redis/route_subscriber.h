#pragma once
// The gateway's side of delivery across gateways: subscribes to the gateway's channel on its routing
// instance, decodes each publication and hands it to the gateway's DeliveryNotifier (its connection
// registry), so the chain rules of docs/protocol.md "Delivery" apply to what the MailboxNodes publish.
// A report here holds only this gateway's users' entries of the move (the registry pushes per user and
// never needs the others).
//
// What it cannot see, it turns into breaks of the chains (SYNC_NEEDED to the users concerned):
//   - (re)subscribing: whatever was published while it was not subscribed is gone, so EVERY shard whose
//     chain it has followed is broken at its current end (decision: a break per shard, not a blanket
//     SYNC_NEEDED, so a shard's chain restarts where the next publication continues);
//   - a payload that does not decode: counted, and every followed shard is broken the same way;
//   - resync_around(shards, rewrite): the route registrar found routes missing (expired, or a routing
//     instance restarted): the routes are rewritten and those shards broken with no publication handed
//     on in between; here a shard never reported to this gateway is broken too (its users' next DELIVER
//     may start at the publisher's base, which the users' SYNC after this break covers).
// Signal payloads (kind 2, signal_payload.h) share the channel: they go to options.signals and touch no
// chain (a corrupt one is counted and dropped: signals are ephemeral, no shard is concerned).
// On (re)subscription a shard never reported needs no break: nothing was handed on for it, so a
// publication lost for it leaves the publisher's point poisoned (its next report carries its own `from`).

#include <atomic>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>

#include "delivery/notifier.h"
#include "delivery/redis/routing_redis.h"
#include "delivery/signal_bus.h"

namespace qim {

struct RouteSubscriberOptions {
  std::chrono::milliseconds reconnect_backoff{200};  // between two subscription attempts
  std::chrono::milliseconds start_timeout{2000};     // how long start() waits for the first subscription
  std::function<void()> on_subscribed;               // after each (re)subscription, e.g. refresh routes now
  // Where signal payloads (signal_payload.h) go: the gateway's live connections. Null: they are counted
  // and dropped. Must outlive the subscriber.
  SignalSink* signals = nullptr;
};

class RouteSubscriber {
 public:
  // `redis` and `gateway` must outlive this object.
  RouteSubscriber(RoutingRedis& redis, std::string gateway_id, DeliveryNotifier& gateway,
                  RouteSubscriberOptions options = {});
  ~RouteSubscriber();
  RouteSubscriber(const RouteSubscriber&) = delete;
  RouteSubscriber& operator=(const RouteSubscriber&) = delete;

  // Starts the subscription thread and waits for the first subscription. Timeout if it did not
  // subscribe within start_timeout (the thread keeps trying; the gateway may serve meanwhile: its users
  // SYNC by the client rule). Call before the gateway accepts connections.
  Status start();
  void stop();

  // Runs `while_held` (e.g. rewriting routes) with publications held back, then breaks the chains of
  // `shards`, including shards never reported here (SYNC_NEEDED to their users' connections).
  // Thread-safe.
  void resync_around(std::span<const ShardId> shards, const std::function<void()>& while_held,
                     const std::string& why);
  // The same for every shard this gateway has followed.
  void resync_all(const std::string& why);

  bool subscribed() const { return subscribed_.load(); }
  uint64_t received() const { return received_.load(); }
  uint64_t corrupt_payloads() const { return corrupt_.load(); }
  uint64_t subscriptions() const { return subscriptions_.load(); }
  uint64_t signals_received() const { return signals_.load(); }  // the first one and every resubscription
  std::string metrics_text() const;                              // qim_routing_subscriber_* counters

 private:
  void run();
  void handle(const std::string& payload);
  void break_locked(ShardId shard, bool even_if_never_reported);

  RoutingRedis& redis_;
  const std::string gateway_id_;
  const std::string channel_;
  DeliveryNotifier& gateway_;
  const RouteSubscriberOptions options_;
  // Calls into the gateway are made under mu_, so a resync and a publication never interleave.
  std::mutex mu_;
  std::unordered_map<uint32_t, MailboxSeq> ends_;  // per shard, the `to` of the last report handed on
  std::atomic<bool> stopping_{false};
  std::atomic<bool> subscribed_{false};
  std::atomic<uint64_t> received_{0}, corrupt_{0}, subscriptions_{0}, signals_{0};
  std::thread thread_;
};

}  // namespace qim
