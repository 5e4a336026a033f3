#pragma once
// MailboxNode (`qim mailbox`, or a role of `qim up`): owns a set of shards at an epoch and runs one shard
// worker thread per owned shard (node/shard_worker.h). Ownership comes from configuration
// (QIM_OWNED_SHARDS, QIM_EPOCH); a shard whose store holds a higher epoch refuses to start (fail closed),
// and so does the whole node.

#include <spdlog/logger.h>

#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "delivery/notifier.h"
#include "log/log.h"
#include "mailbox/store.h"
#include "node/retention_sweeper.h"
#include "node/shard_metrics.h"
#include "node/shard_worker.h"

namespace qim {

inline constexpr const char* kMailboxGroup = "qim-mailbox";

struct NodeOptions {
  std::vector<ShardId> shards;  // owned shards (QIM_OWNED_SHARDS)
  Epoch epoch{1};               // QIM_EPOCH: 1..65535 (0 would make the first record of offset 0 no advance)
  std::string group = kMailboxGroup;
  size_t read_batch = 512;
  std::chrono::milliseconds poll_wait{100};
  std::chrono::milliseconds retry_min{20};
  std::chrono::milliseconds retry_max{5000};
  std::chrono::milliseconds commit_interval{1000};
  // The owned shards' retention sweep (node/retention_sweeper.h); its logger defaults to `logger`.
  RetentionSweepOptions retention;
  // Called once, from a worker thread, when a worker stops on a fatal error (the process should exit).
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

  // Reads every owned shard's frontier, then starts the workers and the retention sweeper. Config for epoch 0
  // or no shards or a shard the mailbox log does not have or no quarantine log; EpochAhead (fail closed) or
  // Invariant from a shard's init. Nothing is started on error.
  Status start();
  // Finishes every record the log holds now, then stops. Timeout past `limit` (stopped anyway).
  Status drain(std::chrono::milliseconds limit, const std::function<void(uint64_t remaining)>& progress = {});
  void stop();
  // The first fatal error of any worker, if one stopped.
  std::optional<Error> fatal() const;
  std::vector<ShardMetrics> metrics() const;
  // The retention sweeper's counters (all zero before start()).
  RetentionMetrics retention_metrics() const;
  // The store's page limit the workers use.
  uint32_t page_limit() const { return store_.finish_page_limit(); }

 private:
  Log& log_;
  MailboxStore& store_;
  DeliveryNotifier* notifier_;
  NodeOptions options_;
  std::unique_ptr<Quarantine> quarantine_;
  std::vector<std::unique_ptr<ShardWorker>> workers_;
  std::vector<std::thread> threads_;
  std::unique_ptr<RetentionSweeper> sweeper_;
};

// Parses "0-15", "3", "0-3,8,10-11" into shards, each below `shard_count`, sorted and without repeats.
// InvalidArgument naming the bad part.
Result<std::vector<ShardId>> parse_shard_set(const std::string& text, uint32_t shard_count);

}  // namespace qim
