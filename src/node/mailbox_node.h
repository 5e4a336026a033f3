#pragma once
// MailboxNode (`qim mailbox`, or a role of `qim up`): owns a set of shards and runs one shard worker thread
// per owned shard (node/shard_worker.h), each shard at its own epoch. Ownership comes either from
// configuration (QIM_OWNED_SHARDS, QIM_EPOCH: the shards start() starts, all at one epoch; a shard whose
// store holds a higher epoch refuses to start (fail closed), and so does the whole node), or at run time
// from the lease loop (node/lease/shard_ownership.h), which calls add_shard() and remove_shard() as it
// takes and gives up leases. Both may be combined: start() starts the configured shards (possibly none
// with `leased`), add_shard()/remove_shard() change the set afterwards.
//
// Thread safety: every public method may be called from any thread. start(), add_shard(), remove_shard(),
// drain() and stop() are serialised among themselves (one waits for the other: a graceful remove_shard()
// or a drain() can take a while); metrics(), owned(), fatal() and shard_error() only take a short lock and
// never wait for them.

#include <spdlog/logger.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "delivery/notifier.h"
#include "log/log.h"
#include "mailbox/store.h"
#include "node/lease_guard.h"
#include "node/retention_sweeper.h"
#include "node/shard_metrics.h"
#include "node/shard_worker.h"

namespace qim {

inline constexpr const char* kMailboxGroup = "qim-mailbox";

struct NodeOptions {
  std::vector<ShardId> shards;  // owned shards (QIM_OWNED_SHARDS), started by start()
  Epoch epoch{1};               // QIM_EPOCH: 1..65535 (0 would make the first record of offset 0 no advance)
  // Shards come from leases (add_shard/remove_shard): start() may start with no shard at all.
  bool leased = false;
  std::string group = kMailboxGroup;
  size_t read_batch = 512;
  std::chrono::milliseconds poll_wait{100};
  std::chrono::milliseconds retry_min{20};
  std::chrono::milliseconds retry_max{5000};
  std::chrono::milliseconds commit_interval{1000};
  // The owned shards' retention sweep (node/retention_sweeper.h); its logger defaults to `logger`.
  RetentionSweepOptions retention;
  // Called once, from a worker thread, when a worker stops on a fatal error (the process should exit).
  // Not called for a shard added with add_shard(): the lease loop handles its errors (shard_error()): a
  // shard taken over or whose lease lapsed (EpochAhead) is dropped, any other fatal error stops that shard
  // until an operator clears it (node/lease/shard_ownership.h); the process goes on with its other shards.
  std::function<void(const Error&)> on_fatal;
  std::shared_ptr<spdlog::logger> logger;  // silent if null
  // Required: the log refused records are appended to before the frontier passes them (node/quarantine.h).
  Log* quarantine = nullptr;
  // The store's clock: schedules the retention sweep and stamps quarantined records; the system clock if
  // null.
  std::shared_ptr<const Clock> clock;
};

class MailboxNode {
 public:
  // `notifier` may be null (delivery mode "pull": nothing is pushed).
  MailboxNode(Log& mailbox_log, MailboxStore& store, DeliveryNotifier* notifier, NodeOptions options);
  ~MailboxNode();
  MailboxNode(const MailboxNode&) = delete;
  MailboxNode& operator=(const MailboxNode&) = delete;

  // Reads every configured shard's frontier, then starts the workers and the retention sweeper. Config for
  // epoch 0 or no shards (unless `leased`) or a shard the mailbox log does not have or no quarantine log;
  // EpochAhead (fail closed) or Invariant from a shard's init. Nothing is started on error.
  Status start();

  // How remove_shard() stops a shard's worker.
  enum class Removal {
    kGraceful,   // finish what the log holds now, commit the log position, then stop (a lease given up)
    kImmediate,  // stop after the store call in progress, no commit (a lease lost: another node may take it)
  };
  // Starts owning `shard` at `epoch` (after start()): reads its frontier as start() does, then runs its
  // worker. With `lease`, every write of the shard first asks it (LeaseGuardedStore): once it says no, the
  // worker stops writing (EpochAhead "lease lapsed", see shard_error()). InvalidArgument for an epoch
  // outside 1..65535 or a shard the mailbox log does not have; Invariant if the node is not started, is
  // stopped, or owns the shard already; EpochAhead (fail closed) if the store holds a higher epoch;
  // Invariant from the worker's init. Nothing runs for the shard on error.
  Status add_shard(ShardId shard, Epoch epoch, LeaseCheck lease = {});
  // Stops owning `shard` (see Removal); returns once its worker thread has ended. Graceful gives the
  // drain up to `limit` (then stops as immediate, but commits: Timeout naming what was left). NotFound if
  // the shard is not owned. The shard's metrics disappear from metrics().
  Status remove_shard(ShardId shard, Removal how, std::chrono::milliseconds limit = std::chrono::seconds(10));
  // The owned shards and the epoch of each, ascending by shard.
  std::vector<std::pair<ShardId, Epoch>> owned() const;
  // What can be checked of `shard` before taking it, without an epoch: the shard is a partition of the
  // mailbox log, and the store's frontier (highest epoch) does not lie beyond the end of the log. Returns
  // that frontier. InvalidArgument for an unknown shard; Invariant if log and store do not belong
  // together (a worker's init would refuse the same); the store's or the log's error if unreadable.
  Result<MailboxSeq> check_shard(ShardId shard) const;
  // The error the shard's worker stopped on (e.g. EpochAhead: taken over, or its lease lapsed); nullopt
  // while it runs or if the shard is not owned.
  std::optional<Error> shard_error(ShardId shard) const;

  // Finishes every record the log holds now, then stops. Timeout past `limit` (stopped anyway).
  Status drain(std::chrono::milliseconds limit, const std::function<void(uint64_t remaining)>& progress = {});
  // Stops every worker and the sweeper (idempotent). Afterwards add_shard() is refused; metrics() still
  // shows the shards owned at the stop.
  void stop();
  // The first fatal error of any worker, if one stopped; not of a shard added with add_shard() (the lease
  // loop's business, see on_fatal).
  std::optional<Error> fatal() const;
  // Per owned shard, ascending by shard.
  std::vector<ShardMetrics> metrics() const;
  // The retention sweeper's counters (all zero before start()).
  RetentionMetrics retention_metrics() const;
  // The store's page limit the workers use.
  uint32_t page_limit() const { return store_.finish_page_limit(); }

 private:
  struct Slot {
    ShardId shard;
    Epoch epoch;
    bool added = false;                        // by add_shard(): EpochAhead is not process-fatal
    std::unique_ptr<LeaseGuardedStore> guard;  // null without a lease check
    std::unique_ptr<ShardWorker> worker;
    std::thread thread;
    std::atomic<bool> ended{false};  // the worker's run() returned (stopped, drained or fatal)
  };
  // The worker of `shard` at `epoch`, initialised (fail closed), not yet running.
  Result<std::unique_ptr<Slot>> make_slot(ShardId shard, Epoch epoch, LeaseCheck lease);
  void run_slot(Slot& slot);
  void stop_locked();
  std::vector<ShardId> shard_list() const;  // caller holds mu_

  Log& log_;
  MailboxStore& store_;
  DeliveryNotifier* notifier_;
  NodeOptions options_;
  std::unique_ptr<Quarantine> quarantine_;
  std::mutex control_mu_;  // serialises start/add_shard/remove_shard/drain/stop
  mutable std::mutex mu_;  // guards slots_ and the flags; never held while waiting for a worker
  std::map<uint32_t, std::unique_ptr<Slot>> slots_;
  bool started_ = false;
  bool stopped_ = false;
  std::unique_ptr<RetentionSweeper> sweeper_;
};

// Parses "0-15", "3", "0-3,8,10-11" into shards, each below `shard_count`, sorted and without repeats.
// InvalidArgument naming the bad part.
Result<std::vector<ShardId>> parse_shard_set(const std::string& text, uint32_t shard_count);

}  // namespace qim
