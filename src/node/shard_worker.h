#pragma once
// A shard worker: the one writer of a shard's mailbox at an epoch. Its FIFO is fed from the shard's
// mailbox-log partition, starting after the frontier the store holds. Records present at start-up (catch-up)
// are finished one by one; after that, when the store's page limit is above 1, the worker takes the first
// record and the records already queued behind it (never waiting to fill a page) and finishes them as one
// page. W is always the frontier the store returned. After each move the worker tells the notifier which
// entries became visible (every move, as a range (from, to]; a move after an uncertain write whose entries
// it cannot name is reported as a range unknown), and now and then commits its log position (for observation:
// on restart the frontier, not the position, says where to resume).

#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <vector>

#include "delivery/notifier.h"
#include "log/log.h"
#include "mailbox/store.h"
#include "node/page.h"
#include "node/shard_metrics.h"

namespace qim {

struct ShardWorkerOptions {
  ShardId shard;
  Epoch epoch;
  std::string group = "qim-mailbox";
  size_t read_batch = 512;
  std::chrono::milliseconds poll_wait{100};
  std::chrono::milliseconds retry_min{20};
  std::chrono::milliseconds retry_max{5000};
  std::chrono::milliseconds commit_interval{1000};
  std::shared_ptr<spdlog::logger> logger;  // required
  Quarantine* quarantine = nullptr;        // required: where refused records go before W passes them
};

class ShardWorker {
 public:
  ShardWorker(Log& mailbox_log, MailboxStore& store, DeliveryNotifier* notifier, ShardWorkerOptions options);

  // Reads the shard's frontier: EpochAhead if the store holds a higher epoch than ours (fail closed);
  // Invariant if the frontier lies beyond the end of the mailbox log (log and store do not belong together).
  Status init();
  // The worker's loop; returns on stop, when a drain is complete, or on a fatal error (see fatal()).
  void run();
  void request_stop();
  // Stops like request_stop() but without the final commit of the log position: for a shard whose lease
  // was lost, whose position is the new owner's to commit.
  void request_abort();
  // Finish what the log holds now, then return from run().
  void request_drain();
  bool drained() const { return drained_; }
  std::optional<Error> fatal() const;
  ShardMetrics metrics() const;

 private:
  Status fill(std::chrono::milliseconds wait);
  // One step: the next page (or single record) materialised; false if the worker must stop.
  bool step();
  void recover_after_failure(const Error& error);
  // The entries made visible by a move of the frontier over `covered` (the records it passed, in order),
  // rebuilt from the records and the store's dispatch progress; nullopt if that cannot be said for sure.
  std::optional<std::vector<MailboxEntry>> rebuild_visible(std::span<const QueuedRecord> covered);
  void maybe_commit(bool force);
  bool pause(std::chrono::milliseconds d);
  void set_fatal(const Error& error);

  Log& log_;
  MailboxStore& store_;
  DeliveryNotifier* notifier_;
  ShardWorkerOptions options_;
  spdlog::logger& logger_;
  uint32_t page_limit_ = 1;

  // Worker thread state. The FIFO is queue_[head_..]: a vector, so a page is one contiguous span.
  std::vector<QueuedRecord> queue_;
  size_t head_ = 0;
  MailboxSeq w_;               // the frontier as the store last returned it
  uint64_t single_until_ = 0;  // records below this offset go one by one (isolating a refused record)
  uint64_t next_read_ = 0;     // next offset to read into the queue
  uint64_t catch_up_end_ = 0;  // log end at start: records below it are finished one by one
  std::atomic<uint64_t> finished_next_{0};  // offset after the last record taken off the queue
  uint64_t committed_next_ = 0;
  std::chrono::steady_clock::time_point last_commit_;
  std::chrono::steady_clock::time_point next_progress_;  // catch-up progress is logged every few seconds
  std::chrono::milliseconds backoff_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> skip_final_commit_{false};
  std::optional<uint64_t> drain_until_;  // guarded by mu_
  std::atomic<bool> drained_{false};
  std::optional<Error> fatal_;  // guarded by mu_
  ShardMetrics metrics_;        // guarded by mu_
};

}  // namespace qim
