#pragma once
// The ownership loop of a MailboxNode whose shards come from leases (QIM_OWNED_SHARDS unset or `auto` in
// a deployment whose mailbox log is shared; docs/adr/0018-shard-leases.md).
//
// Every scan ((ttl - margin)/3 by default: three renewals inside the window a lease is believed) the
// loop, in this order:
//  1. announces the node (heartbeat, ttl);
//  2. renews each lease it holds. A lease is believed until (send time of the last successful grant or
//     renewal) + ttl - margin on the local monotonic clock: the store counts the ttl from when it
//     applied the request, later, so the holder always stops first. Every write of the shard checks
//     that deadline (LeaseGuardedStore), so a node that cannot renew in time stops writing the shard
//     before another node may take it; the loop then removes the shard (immediate). A renewal refused
//     (kNotOwner), or a worker stopped by EpochAhead (the store's fence, the second line), also removes
//     the shard at once;
//  3. rebalances: fair share = ceil(shards / live nodes). Above it, the node gives up its highest shards
//     gracefully (drain the worker, commit, then release the lease), within a time budget per scan;
//     below it, the node takes free shards (released, expired, never leased), lowest first, each at
//     epoch max(lease epoch, the store's highest frontier epoch) + 1, and starts their workers
//     (MailboxNode::add_shard). A shard that stays free for a whole ttl is taken by any node, whatever
//     its share, so a live but idle node never leaves a shard unowned.
//     Planned moves (LeaseStore::request_move) come first: a held shard with a pending move to another
//     node is given up gracefully (the worker finishes the page in progress and commits; the frontier
//     is durable before the lease is released), whatever the share, within the scan's drain budget
//     (more moves: next scan); a free shard with a pending move to
//     this node is taken, whatever the share, and one with a move to another node is never taken. A
//     shard this node got by a move is given up last when it is above its share, so the balancing gives
//     other shards back instead of moving it straight back.
// Failed takes (docs/operations.md, "A shard that cannot start"). Epochs are finite (65535 per shard) and
// every grant spends one, so:
//  - what can be checked without a lease is checked first (MailboxNode::check_shard: the shard is a log
//    partition, the store's frontier lies within the log); a shard that fails it is not acquired at all;
//  - a shard whose take fails (the check, the grant, or its worker not starting after the grant: the
//    lease is then released) is not tried again before a back-off that doubles per failure, from one scan
//    up to retry_max (so a shard that can never start spends about log2(retry_max / scan) epochs, then
//    one per retry_max, instead of one per scan); a take that starts its worker resets it;
//  - a worker that stops on a fatal error other than EpochAhead (a corrupt row, a broken invariant) keeps
//    its lease: the node goes on renewing it, so no node retakes the shard at a new epoch, and says so
//    (a critical log line, OwnershipMetrics::stopped, qim_lease_shard_stopped on /metrics) until an
//    operator clears it (clear(): `qim admin shard clear N`), which restarts its worker at the same epoch.
//    A planned move of the shard (`qim admin shard move`) and the node's stop release it as usual;
//  - takes share a time budget per scan (take_budget), so a slow grant or frontier read delays the next
//    scan's renewals by at most that budget; the shards left over are tried at the next scan.
// Takeover bound: a node that dies at T renewed last at T - scan at the latest; its leases expire by
// T + ttl, and the other nodes see them free on their next scan: all its shards are owned again by
// T + ttl + scan (+ one acquire and one frontier read per shard; on CQL + 2 s, see cql_lease_store.h).
//
// Thread safety: start(), stop() and tick() must not be called concurrently with each other (start()
// runs tick() on its own thread until stop()); metrics() may be called from any thread.

#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "mailbox/store.h"
#include "node/lease/lease_store.h"
#include "node/mailbox_node.h"

namespace qim {

// Milliseconds of the steady clock: lease deadlines never move with the wall clock.
class MonotonicClock final : public Clock {
 public:
  int64_t now_ms() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

struct OwnershipOptions {
  std::string node_id;                          // QIM_NODE_ID (required; unique per process)
  uint32_t shard_count = 0;                     // QIM_SHARDS (required)
  std::chrono::milliseconds ttl{10'000};        // QIM_SHARD_LEASE_TTL_MS
  std::chrono::milliseconds margin{3'000};      // QIM_SHARD_LEASE_MARGIN_MS: stop writing this long before
  std::chrono::milliseconds scan{0};            // the renewal/rebalance interval; 0: (ttl - margin) / 3
  std::chrono::milliseconds release_budget{0};  // per scan, for graceful give-ups; 0: (ttl - margin) / 3
  std::chrono::milliseconds take_budget{0};     // per scan, for takes; 0: (ttl - margin) / 3
  // The longest wait before a shard whose take failed is tried again (QIM_SHARD_TAKE_RETRY_MAX_MS); the
  // wait starts at one scan and doubles per failure.
  std::chrono::milliseconds retry_max{std::chrono::minutes(30)};
  // Local deadlines and the scan schedule; a MonotonicClock if null (tests inject a ManualClock).
  std::shared_ptr<const Clock> clock;
  std::shared_ptr<spdlog::logger> logger;  // silent if null
};

// The options with the defaults of the zero fields filled in: scan, release_budget and take_budget
// (ttl - margin) / 3,
// a MonotonicClock, a silent logger.
OwnershipOptions with_defaults(OwnershipOptions options);

// Config naming the variable unless node_id is set, shard_count > 0, ttl >= 30 ms, 0 < margin and
// 3 * (ttl - margin) > ttl and ttl - margin > scan (the lease is believed for more than a third of its
// ttl and at least one renewal fits inside it), and scan > 0.
Status validate(const OwnershipOptions& options);

struct OwnershipMetrics {
  std::vector<std::pair<ShardId, Epoch>> held;  // leases held now, ascending by shard
  uint32_t live_nodes = 0;                      // at the last scan that could list them
  uint32_t fair_share = 0;
  uint64_t scans = 0;
  uint64_t acquired = 0;        // leases taken (each at a new epoch)
  uint64_t released = 0;        // given up gracefully (rebalance, stop)
  uint64_t lost = 0;            // removed at once: not renewed in time, refused, or fenced by the store
  uint64_t renew_failures = 0;  // renewals that could not reach the lease store
  uint64_t moved_out = 0;       // given up to a planned move's target (counted in released too)
  uint64_t moved_in = 0;        // taken as a planned move's target (counted in acquired too)
  uint64_t take_failures = 0;   // takes that failed (check, grant or worker start): each backs off
  // Shards whose worker stopped on a fatal error, with the error: their leases are held (and in `held`),
  // nothing writes them until clear().
  std::vector<std::pair<ShardId, std::string>> stopped;
};

class ShardOwnership {
 public:
  // `node` must be started (with NodeOptions::leased); `store` is the node's store (its highest epoch
  // per shard is the floor of every grant). All must outlive this object.
  ShardOwnership(MailboxNode& node, LeaseStore& leases, MailboxStore& store, OwnershipOptions options);
  ~ShardOwnership();
  ShardOwnership(const ShardOwnership&) = delete;
  ShardOwnership& operator=(const ShardOwnership&) = delete;

  // Validates the options, runs the first scan, then scans every `scan` on a thread of its own.
  Status start();
  // One scan now (renew, give up, take). Tests drive it by hand with an injected clock.
  void tick();
  // Stops the thread; gives up every held shard gracefully (drain, commit, release) and withdraws the
  // heartbeat, so the other nodes take the shards on their next scan instead of after the ttl.
  void stop();
  OwnershipMetrics metrics() const;
  // Asks the loop to restart the worker of `shard`, stopped on a fatal error, at the same epoch (its next
  // scan). NotFound if the shard is not stopped on this node (at the last scan). Any thread.
  Status clear(ShardId shard);

 private:
  struct Held {
    Epoch epoch;
    std::shared_ptr<std::atomic<int64_t>> deadline_ms;  // shared with the shard's LeaseCheck
  };
  struct Retry {
    uint32_t failures = 0;
    int64_t next_ms = 0;  // no take before this
  };
  // Starts the worker of a held shard at its lease's epoch, its writes checked against the deadline.
  Status start_worker(ShardId shard, const Held& held);
  // A failed take of `shard`: the next try waits scan * 2^(failures - 1), at most retry_max.
  void back_off(ShardId shard, const std::string& why);
  // Keeps the lease of a shard whose worker stopped on `error` and removes the worker.
  void hold_stopped(ShardId shard, const Error& error);
  void apply_clears();
  void renew_all();
  void rebalance();
  bool take(ShardId shard, bool moved_in = false);
  // The held shard to give up first above the share: the highest one not got by a move, else the highest.
  std::map<uint32_t, Held>::iterator next_to_give_up();
  void give_up(ShardId shard, const Held& held, MailboxNode::Removal how, const char* why);
  int64_t now() const { return clock_->now_ms(); }

  MailboxNode& node_;
  LeaseStore& leases_;
  MailboxStore& store_;
  OwnershipOptions options_;
  std::shared_ptr<const Clock> clock_;
  spdlog::logger& log_;

  std::map<uint32_t, Held> held_;            // loop thread only (copied into metrics_ under mu_)
  std::map<uint32_t, int64_t> free_since_;   // loop thread only: when each free shard was first seen free
  std::set<uint32_t> moved_in_;              // loop thread only: held shards got by a planned move
  std::map<uint32_t, Retry> retry_;          // loop thread only: shards whose last take failed
  std::map<uint32_t, std::string> stopped_;  // loop thread only: held shards stopped on a fatal error
  std::set<uint32_t> clears_;                // guarded by mu_: clear() requests for the next scan

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;         // guarded by mu_
  OwnershipMetrics metrics_;  // guarded by mu_
  std::thread thread_;
};

}  // namespace qim
