#pragma once
// The retention sweeper of a MailboxNode: the shard owner moves its users' trims past their expired day
// buckets (MailboxStore::sweep_retention), so expired entries stop being read, proofs are not needed
// after they expire (entry TTL + 30 d on CQL), and Redis drops entries below the trim.
//
// Work is bounded per round: at most `batch` users, taken from the owned shards' retention-user
// listings in order and resumed where the previous round stopped, so a pass over every user takes
// ceil(users / batch) rounds. A round stops early when it completes a pass (it never visits a user
// twice). Rounds are `interval` apart on the store's clock; each logs one line. A failed sweep (e.g. a
// missing proof: ProofMissing) is counted and logged, and that user is tried again on the next pass;
// the sweeper never stops on an error.

#include <spdlog/logger.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "mailbox/store.h"
#include "node/retention_metrics.h"

namespace qim {

struct RetentionSweepOptions {
  std::chrono::milliseconds interval{60'000};  // QIM_RETENTION_SWEEP_INTERVAL_MS
  uint32_t batch = 1000;                       // QIM_RETENTION_SWEEP_BATCH: users per round
  std::shared_ptr<spdlog::logger> logger;      // silent if null
};

class RetentionSweeper {
 public:
  // `shards` are the owned shards; `clock` decides when a round is due (the store's clock).
  RetentionSweeper(MailboxStore& store, std::vector<ShardId> shards, std::shared_ptr<const Clock> clock,
                   RetentionSweepOptions options);
  ~RetentionSweeper();
  RetentionSweeper(const RetentionSweeper&) = delete;
  RetentionSweeper& operator=(const RetentionSweeper&) = delete;

  // Runs a round if one is due (the first at once, then `interval` after the previous one ended on the
  // clock); true if it ran. Not to be called concurrently with itself (the thread calls it).
  bool tick();
  // One round now, regardless of the schedule: up to `batch` users.
  void run_round();
  // The store-clock time the next round is due.
  int64_t next_due_ms() const;

  // Starts a thread that calls tick() until stop(); it wakes at least every `interval` of wall time.
  void start();
  // Stops and joins the thread (idempotent; a round in progress finishes its current user first).
  void stop();

  RetentionMetrics metrics() const;
  // Replaces the owned shards (a MailboxNode whose shards come and go); the next round uses the new set,
  // resuming at the shard it was at if that is still owned, else at the first. Thread-safe.
  void set_shards(std::vector<ShardId> shards);

 private:
  bool stopping() const;

  MailboxStore& store_;
  std::vector<ShardId> shards_;
  std::shared_ptr<const Clock> clock_;
  RetentionSweepOptions options_;

  // Where the next round resumes: shards_[shard_index_], users strictly after cursor_ (tick() only).
  size_t shard_index_ = 0;
  std::string cursor_;
  std::optional<int64_t> next_due_ms_;  // guarded by mu_

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;                                // guarded by mu_
  std::optional<std::vector<ShardId>> next_shards_;  // guarded by mu_: set_shards() for the next round
  RetentionMetrics metrics_;                         // guarded by mu_
  std::thread thread_;
};

}  // namespace qim
