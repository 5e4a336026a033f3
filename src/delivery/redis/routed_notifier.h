#pragma once
// The node's side of delivery across gateways: a DeliveryNotifier that sends each frontier move to the
// gateways holding live connections of the users concerned, over Redis pub/sub (docs/protocol.md
// "Delivery across gateways", docs/architecture.md "Routing across gateways").
//
// Reports are queued in a FanInNotifier (so a shard worker never waits on Redis; bounded; an overflow
// becomes a "range unknown" at its place in the shard's chain) and handed, on its delivery thread, to the
// publisher, which per report:
//   - looks up the routes of the users in the entries (one pipelined ZRANGEBYSCORE per routing instance),
//   - publishes to each concerned gateway's channel only that gateway's users' entries, with `from` = the
//     `to` of the last report of this shard it published to that gateway (so the ranges it had nothing in
//     collapse, and the gateway's chain stays contiguous); to a gateway it never published this shard to,
//     the point since which it lost nothing of the shard (its first report's `from`, or the end of the
//     last loss); after a publication that may not have arrived, the report's own `from` (a break),
//   - sends a range reported unknown to every live gateway (the gateway registry).
// A report it cannot publish (a routing instance down or failing) is never silent: the shard's lost
// ranges collapse into one "range unknown" that is broadcast as soon as Redis answers again (at the
// shard's next report, or within `retry_interval`), and the shard's per-gateway chain points are
// forgotten, so every gateway's next report of the shard starts a new chain (a break: SYNC_NEEDED).

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>

#include "delivery/fan_in_notifier.h"
#include "delivery/redis/routing_redis.h"

namespace qim {

struct RoutedNotifierOptions {
  size_t max_queued_entries = 100'000;            // the fan-in's bound (entries queued for publishing)
  std::chrono::milliseconds retry_interval{500};  // how often a pending "range unknown" is retried
};

class RoutedNotifier final : public DeliveryNotifier {
 public:
  // `redis` must outlive this object. Starts the delivery and retry threads.
  RoutedNotifier(RoutingRedis& redis, RoutedNotifierOptions options = {});
  // The same over routing instances of its own (what `qim mailbox` wires). Config error for bad
  // endpoints; connects lazily.
  static Result<std::unique_ptr<RoutedNotifier>> create(const RoutingOptions& routing,
                                                        RoutedNotifierOptions options = {});
  // Publishes what is queued (as far as Redis answers), then stops.
  ~RoutedNotifier() override;
  RoutedNotifier(const RoutedNotifier&) = delete;
  RoutedNotifier& operator=(const RoutedNotifier&) = delete;

  // Thread-safe; never blocks on Redis (see FanInNotifier).
  void entries_visible(ShardId shard, MailboxSeq from, MailboxSeq to,
                       std::span<const MailboxEntry> entries) override;
  void range_unknown(ShardId shard, MailboxSeq from, MailboxSeq to) override;
  // Returns once every report queued before the call went through the publisher (published or lost).
  void flush() { fan_in_.flush(); }

  struct Counters {
    uint64_t publications = 0;  // PUBLISHes that reached a subscribed gateway
    uint64_t unsubscribed = 0;  // PUBLISHes no subscriber heard (the gateway was away)
    uint64_t lost_reports = 0;  // reports that could not be published (went on as range unknown)
    uint64_t unknown_broadcasts = 0;
    uint64_t dropped_entries = 0;  // entries the fan-in dropped under load
    uint64_t pending_unknown = 0;  // shards whose lost ranges are not broadcast yet (Redis away)
  };
  Counters counters() const;
  // Prometheus text of the counters (qim_routing_*).
  std::string metrics_text() const;

 private:
  // Runs on the fan-in's delivery thread only: its state needs no lock.
  class Publisher final : public DeliveryNotifier {
   public:
    explicit Publisher(RoutingRedis& redis) : redis_(redis) {}
    void entries_visible(ShardId shard, MailboxSeq from, MailboxSeq to,
                         std::span<const MailboxEntry> entries) override;
    void range_unknown(ShardId shard, MailboxSeq from, MailboxSeq to) override;
    bool has_pending() const { return pending_count_.load() > 0; }
    std::vector<ShardId> pending_shards() const;

    std::atomic<uint64_t> publications{0}, unsubscribed{0}, lost_reports{0}, unknown_broadcasts{0};

   private:
    // Publishes (shard's pending unknown, if any). False if Redis could not be reached: still pending.
    bool broadcast_pending(ShardId shard);
    // Remembers (from, to] of `shard` as lost and forgets the shard's chain points.
    void lose(ShardId shard, MailboxSeq from, MailboxSeq to);
    Result<std::vector<std::string>> live_gateways();

    // The `from` of a report to `gateway`: its chain point, else the shard's base.
    MailboxSeq from_for(const std::string& gateway, ShardId shard, MailboxSeq report_from);
    // The publication to `gateway` may not have arrived: its next report of the shard starts a new chain.
    void poison(const std::string& gateway, ShardId shard) { chains_[gateway][shard.value] = std::nullopt; }

    RoutingRedis& redis_;
    // Per gateway, per shard: the `to` of the last report published to it; nullopt (poisoned) when the
    // last publication may have been lost, so the next one carries the report's own `from` (a break).
    std::unordered_map<std::string, std::unordered_map<uint32_t, std::optional<MailboxSeq>>> chains_;
    // Per shard: every report since this point was looked up and published without a loss. A gateway
    // without a chain point gets this as `from`: none of its users' routes was found in the ranges since
    // (else it would have a point), so nothing of theirs went by unsent.
    std::unordered_map<uint32_t, MailboxSeq> base_;
    struct Lost {
      MailboxSeq from, to;
    };
    std::map<uint32_t, Lost> pending_;
    mutable std::mutex pending_mu_;  // pending_shards() is read by the retry thread
    std::atomic<size_t> pending_count_{0};
  };
  RoutedNotifier(std::unique_ptr<RoutingRedis> owned, RoutedNotifierOptions options);
  void retry_loop();

  std::unique_ptr<RoutingRedis> owned_redis_;  // set by create(); before everything that uses it
  RoutingRedis& redis_;
  const RoutedNotifierOptions options_;
  Publisher publisher_;  // before fan_in_: the fan-in's thread calls it until the fan-in is destroyed
  FanInNotifier fan_in_;
  std::mutex retry_mu_;
  std::condition_variable retry_cv_;
  bool stopping_ = false;
  std::thread retry_;
};

}  // namespace qim
