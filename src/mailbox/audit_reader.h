#pragma once
// AuditReader: what `qim audit dispatch` reads of a store, one implementation per backend folder
// (scylla/audit_reader.h, redis/audit_reader.h, embedded/audit_reader.h). It walks stored rows as they
// are, with the storage engine's own metadata (WRITETIME, TTL) where it has any; the checks themselves
// live once in ops/dispatch_audit.h. Kept apart from StoreBackend: nothing here is on the hot path, and
// nothing here writes.
//
// Every walk is paced: a reader calls RowPacer::account() after each page it read, which sleeps as long
// as needed to stay under the operator's rows-per-second budget (safe to run against production).

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/mailbox_seq.h"
#include "core/sharding.h"
#include "core/status.h"
#include "mailbox/dispatch.h"

namespace qim {

// One frontier row of (shard, epoch). `writetime` is the engine's write timestamp of the offset cell
// where the engine keeps one (CQL), nullopt elsewhere.
struct AuditFrontierRow {
  ShardId shard;
  Epoch epoch;
  Offset offset;
  std::optional<int64_t> writetime;
};

// One dispatch identity row of (shard, epoch, id). writetime as above; ttl_seconds: the row's remaining
// TTL where the engine reports one, -1 for a row with no TTL at all, nullopt where the engine cannot say.
struct AuditIdentityRow {
  ShardId shard;
  Epoch epoch;
  DispatchId id;
  uint64_t digest = 0;
  Manifest manifest;
  Offset canonical;
  std::optional<int64_t> writetime;
  std::optional<int64_t> ttl_seconds;
};

// One mailbox entry: who, where, and which message (the entry's dispatch is found from its message).
struct AuditEntryRow {
  UserId user;
  MailboxSeq seq;
  MessageId message;
};

// A row the reader could not decode: reported as a finding, the walk goes on.
struct AuditCorruptRow {
  std::string where;  // table/key of the row
  std::string problem;
};

// Bounds the rows read per second. Not thread-safe: one walk at a time.
class RowPacer {
 public:
  using Progress = std::function<void(uint64_t rows, std::string_view phase)>;
  // rows_per_second >= 1. `progress` (may be empty) is called at most every `every`.
  RowPacer(uint32_t rows_per_second, Progress progress,
           std::chrono::milliseconds every = std::chrono::seconds(5))
      : rate_(rows_per_second == 0 ? 1 : rows_per_second), progress_(std::move(progress)), every_(every) {}

  // The page size a reader should ask for: at most a second's budget, and not above `cap`.
  uint32_t page_size(uint32_t cap = 500) const { return rate_ < cap ? rate_ : cap; }

  // `rows` more were read in `phase`: sleeps until the total is within budget, reports progress.
  void account(uint64_t rows, std::string_view phase) {
    const auto now = std::chrono::steady_clock::now();
    if (total_ == 0) start_ = last_report_ = now;
    total_ += rows;
    const auto due = start_ + std::chrono::microseconds(total_ * 1'000'000 / rate_);
    if (due > now) std::this_thread::sleep_until(due);
    if (progress_ && std::chrono::steady_clock::now() - last_report_ >= every_) {
      last_report_ = std::chrono::steady_clock::now();
      progress_(total_, phase);
    }
  }
  uint64_t total() const { return total_; }

 private:
  uint32_t rate_;
  Progress progress_;
  std::chrono::milliseconds every_;
  uint64_t total_ = 0;
  std::chrono::steady_clock::time_point start_, last_report_;
};

class AuditReader {
 public:
  virtual ~AuditReader() = default;

  virtual std::string_view backend() const = 0;
  // What this backend guarantees that the audit relies on or cannot check, for the report.
  virtual std::vector<std::string> notes() const = 0;
  // Whether identity conflicts across owners of one epoch can exist at all: false where first writer
  // wins atomically at write time (redis, embedded), true where split brain can write two (scylla).
  virtual bool identity_conflicts_possible() const = 0;

  // Each walk visits every row of its kind once, in no particular order, calling the callback for each
  // (a callback's error stops the walk and is returned) and `corrupt` for rows it cannot decode. Only
  // shards in `shards` (empty: all) where the layout allows filtering; callers filter again anyway.
  // Transport/Timeout when the engine cannot be reached mid-walk.
  using CorruptSink = std::function<void(const AuditCorruptRow&)>;
  virtual Status frontiers(const std::vector<ShardId>& shards, RowPacer& pacer,
                           const std::function<Status(const AuditFrontierRow&)>& visit,
                           const CorruptSink& corrupt) = 0;
  virtual Status identities(const std::vector<ShardId>& shards, RowPacer& pacer,
                            const std::function<Status(const AuditIdentityRow&)>& visit,
                            const CorruptSink& corrupt) = 0;
  virtual Status entries(const std::vector<ShardId>& shards, RowPacer& pacer,
                         const std::function<Status(const AuditEntryRow&)>& visit,
                         const CorruptSink& corrupt) = 0;

  // One identity row by key (one read), or nullopt if there is none (or it expired). CorruptEntry if the
  // row cannot be decoded; Transport/Timeout as above.
  virtual Result<std::optional<AuditIdentityRow>> identity(ShardId shard, Epoch epoch,
                                                           const DispatchId& id) = 0;
};

}  // namespace qim
