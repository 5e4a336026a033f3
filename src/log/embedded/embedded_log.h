#pragma once
// The embedded log: qim::Log on local disk, for the single-process deployment (`qim up`) and tests.
//
//   <dir>/META                  name and partition count, fixed at creation
//   <dir>/LOCK                  flock: one process at a time (the embedded log is single-process)
//   <dir>/p<N>/<base>.log       segment files of partition N (frames: log/embedded/frame.h)
//   <dir>/consumers/<group>.offsets   committed positions, replaced atomically
//   <dir>/JOURNAL               the batches not yet synced in their segments (log/embedded/journal.h)
//
// With a retention period, whole sealed segments whose records are all older than it (by append time)
// are deleted: at open, then every retention_check_interval. The active segment is never deleted, so a
// partition keeps at least its latest records. A read below the new start is ExpiredCursor.
//
// Appends go through one writer thread that takes every append queued since its last batch, writes them
// into their segments, appends them to the journal and fdatasyncs it once (group commit: one sync per
// batch, whatever the partitions it touched), and only then publishes the records to readers and calls the
// callbacks: a reader never sees a record that a crash could take back, so a record's offset (and the
// message id derived from it) is never reused. The segments themselves are synced at a checkpoint: when
// the journal is full, and at close. On open, a torn tail left by a crash is detected by the frame
// checksum and truncated, with a warning naming what was cut; then the journal's entries give back the
// records a power loss took from the segments' unsynced tails, and a checkpoint starts a fresh journal.

#include <spdlog/logger.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "log/embedded/consumer_offsets.h"
#include "log/embedded/file.h"
#include "log/embedded/journal.h"
#include "log/embedded/segment.h"
#include "log/log.h"

namespace qim {

struct EmbeddedLogOptions {
  std::string dir;           // created if missing
  std::string name = "log";  // for messages and META
  uint32_t partitions = 1;   // fixed at creation; reopening with another count is a Config error
  uint64_t segment_bytes = 64ull << 20;
  size_t max_record_bytes = 1 << 20;
  std::shared_ptr<const Clock> clock;   // append timestamps and retention; SystemClock if null
  std::optional<int64_t> retention_ms;  // nullopt: keep every record (QIM_OUTBOX_RETENTION_MS)
  // The journal's size, fixed on disk (written with zeros once); a batch that does not fit in what is left
  // of it is made durable by a checkpoint instead. At least embedded_log::kMinJournalBytes.
  uint64_t journal_bytes = 8ull << 20;
  std::chrono::milliseconds retention_check_interval{60'000};
  // The least time between the starts of two writer batches (group commit delay, decision 50). An append
  // that finds the writer idle and the last batch older than this is written at once; appends that arrive
  // sooner wait together until the interval has passed and go into one batch: one journal write and
  // fdatasync, one publish, and one wake-up of each reader for all of them. 0: a batch starts as soon as
  // an append arrives.
  std::chrono::microseconds batch_interval{0};
  // The most appends waiting for the writer's next batch (decision 106): while a batch waits for a slow or
  // stuck fsync, appends past this many are refused at once (Timeout: not written, retry later) instead of
  // piling up behind it. 0: no bound.
  size_t max_queued_appends = 0;
  std::shared_ptr<spdlog::logger> logger;  // recovery and failures; silent if null
};

struct EmbeddedLogStats {
  uint64_t appends = 0;             // records made durable
  uint64_t batches = 0;             // writer batches (group commits)
  uint64_t syncs = 0;               // fdatasync calls on the journal and on segments
  uint64_t checkpoints = 0;         // journal generations ended (segments synced); the open's included
  uint64_t replayed = 0;            // records the open took back from the journal into the segments
  uint64_t segments_deleted = 0;    // sealed segments deleted by retention
  uint64_t records_deleted = 0;     // records in them
  uint64_t refused_queue_full = 0;  // appends refused over max_queued_appends (never written)
  double mean_batch() const { return batches ? static_cast<double>(appends) / batches : 0.0; }
};

// The partition count the embedded log in `dir` was created with (its META); nullopt if no log was
// created there. CorruptEntry naming the file if META does not parse; Io if it cannot be read.
Result<std::optional<uint32_t>> embedded_log_partitions(const std::string& dir);

class EmbeddedLog final : public Log {
 public:
  // Opens or creates the log, recovering each partition (torn tails truncated). Io if the directory is
  // locked by another process or unreadable; CorruptEntry if a sealed segment is damaged; Config if the
  // partition count differs from the one the log was created with.
  static Result<std::unique_ptr<EmbeddedLog>> open(EmbeddedLogOptions options);
  ~EmbeddedLog() override;

  const std::string& name() const override { return options_.name; }
  uint32_t partition_count() const override { return options_.partitions; }
  // Errors (unknown partition, oversize record, closed log, Timeout over max_queued_appends) also arrive
  // through `done`; a refused append is not written.
  void append(uint32_t partition, std::string key, std::string value, AppendCallback done) override;
  // Only durable records are returned. InvalidArgument for `from` beyond end_offset(); ExpiredCursor for
  // `from` below start_offset() (deleted by retention); an empty vector after `wait`, or at once when the
  // log is closing.
  Result<std::vector<LogRecord>> read(uint32_t partition, Offset from, size_t max,
                                      std::chrono::milliseconds wait) override;
  // The offset after the last durable record (Kafka's high watermark).
  Result<Offset> end_offset(uint32_t partition) override;
  // The first offset still kept (retention moves it on).
  Result<Offset> start_offset(uint32_t partition) override;
  // Any position up to end_offset() may be committed, also an earlier one (that is how a replay starts).
  Status commit(const std::string& group, uint32_t partition, Offset next) override;
  Result<std::optional<Offset>> committed(const std::string& group, uint32_t partition) override;
  size_t max_record_bytes() const override { return options_.max_record_bytes; }

  // Stops taking appends, makes every queued one durable (or failed) and wakes blocked readers. Idempotent;
  // the destructor calls it.
  void close();
  EmbeddedLogStats stats() const;
  // Deletes, in every partition, the sealed segments from the oldest on whose records are all older than
  // the retention period (a newer segment stops it: the log stays contiguous); logs one line per partition
  // that lost segments. Returns the number of segments deleted; 0 without a retention period. Io if a file
  // cannot be removed (the segment is then already out of the log).
  Result<uint64_t> enforce_retention();

 private:
  struct Pending {
    uint32_t partition = 0;
    std::string key;
    std::string value;
    AppendCallback done;
    std::optional<Error> error;  // refused before writing
    Result<Offset> result = Error(Errc::kIo, "not written");
  };
  struct Partition {
    uint32_t id = 0;
    std::string dir;
    mutable std::mutex mu;
    std::condition_variable cv;
    std::vector<std::shared_ptr<embedded_log::Segment>> segments;  // guarded by mu, ascending base
    uint64_t durable_end = 0;                                      // guarded by mu
    // Writer thread only:
    uint64_t next_offset = 0;
    std::optional<Error> failed;  // after a failed fsync nothing more is trusted until a reopen
  };

  // What a batch wrote into one partition's segments, published to readers only once it is durable.
  struct Touched {
    std::shared_ptr<embedded_log::Segment> seg;
    uint64_t size;  // bytes after this batch
    uint64_t end_offset;
    std::vector<embedded_log::IndexEntry> index;
    bool fresh;
    uint64_t last_index_pos;
    bool written = false;  // holds a record of this batch (its max timestamp becomes the batch's time)
  };
  struct Staged {
    Partition* partition = nullptr;
    std::vector<Pending*>* pendings = nullptr;
    uint64_t first_offset = 0;
    uint64_t size_before = 0;  // of the segment that was active
    std::vector<Touched> touched;
    std::string frames;  // every frame written, for the journal
  };

  explicit EmbeddedLog(EmbeddedLogOptions options, embedded_log::DirLock lock);
  // recovery.cc: a partition's segments (torn tail cut), then the journal's records on top.
  Status recover_partition(Partition& p);
  Status replay_journal(std::vector<embedded_log::JournalEntry>& entries);
  Result<Partition*> partition(uint32_t id);
  void writer_loop();
  // Writes a partition's share of a batch into its segments (not synced, not published).
  Status stage_frames(Partition& p, std::vector<Pending*>& batch, int64_t now_ms, Staged& out);
  // The staged batch into the journal, or a checkpoint if it does not fit.
  Status make_durable(std::vector<Staged>& staged);
  void publish(Staged& staged, int64_t now_ms);
  // Takes back what a failed batch wrote, so a reopen does not resurrect records reported failed. False if
  // the segment could not be cut back (or a fresh one removed).
  bool take_back(Staged& staged);
  // Syncs every segment written since the last checkpoint, then starts a new journal generation.
  Status checkpoint();
  Result<std::shared_ptr<embedded_log::Segment>> roll(Partition& p, embedded_log::Segment& current);

  EmbeddedLogOptions options_;
  embedded_log::DirLock lock_;
  std::vector<std::unique_ptr<Partition>> partitions_;
  embedded_log::ConsumerOffsets offsets_;
  // Writer thread only (and open, before it starts):
  embedded_log::Journal journal_;
  std::vector<std::shared_ptr<embedded_log::Segment>> dirty_;  // written since the last checkpoint

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::vector<Pending> queue_;  // guarded by queue_mu_
  bool closing_ = false;        // guarded by queue_mu_
  // Guarded by queue_mu_: the writer waits for the queue to fill (an append must wake it). While it waits
  // out the batch interval appends do not wake it: they would only put it back to sleep.
  bool writer_idle_ = false;
  std::atomic<bool> closed_for_readers_{false};
  std::thread writer_;
  std::thread retention_;  // runs enforce_retention() every retention_check_interval
  std::mutex retention_mu_;
  std::condition_variable retention_cv_;
  bool retention_stop_ = false;  // guarded by retention_mu_

  std::atomic<uint64_t> appends_{0}, batches_{0}, syncs_{0}, segments_deleted_{0}, records_deleted_{0},
      checkpoints_{0}, replayed_{0}, refused_queue_full_{0};
};

}  // namespace qim
