#pragma once
// Rows another store keeps in the embedded mailbox's own RocksDB database, written in the same batch as
// the entries they describe (docs/adr/0088-embedded-inbox-in-the-mailbox-db.md). Today that is the inbox
// (src/inbox/embedded/): its column families are declared here because the mailbox database opens them
// every time (RocksDB refuses to open a database without all its families, and compactions of merged rows
// need their merge operator), whether or not an inbox is attached.
//
// Attached (embedded_backend_attach, embedded_backend.h), the side writes into the mailbox's database: its
// rows go into the one write-ahead log the entries go into, whose sync at the next frontier write makes
// every row written before it durable. No second database, no second fsync.

#include <rocksdb/compaction_filter.h>
#include <rocksdb/db.h>
#include <rocksdb/merge_operator.h>

#include <array>
#include <memory>
#include <string_view>

#include "core/clock.h"
#include "core/status.h"
#include "mailbox/embedded/rocks_write_gate.h"
#include "mailbox/embedded/wal_sync.h"

namespace qim::embedded {

// The inbox's families (their rows: inbox/embedded/inbox_rows.h), in the order of SideDb::families.
enum SideFamily : size_t {
  kInboxIndex,
  kInboxRows,
  kInboxMarks,
  kInboxReceipts,
  kInboxSettings,
  kInboxActivity,  // docs/adr/0089
  kSideFamilyCount
};
inline constexpr std::array<std::string_view, kSideFamilyCount> kSideFamilyNames = {
    "inbox_index", "inbox_rows", "inbox_marks", "inbox_receipts", "inbox_settings", "inbox_activity"};

// Keeps the operand whose first 16 bytes are bytewise greatest (the later one on a tie): a monotonic max
// written blind, as a CQL cell USING TIMESTAMP. A value under 16 bytes fails the merge (Corruption).
class Max16Merge final : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice& key, const rocksdb::Slice* existing, const rocksdb::Slice& value,
             std::string* merged, rocksdb::Logger* logger) const override;
  const char* Name() const override { return "qim.InboxMax16Merge"; }
};

// Drops values whose bytes 8..16 (a big-endian expiry in ms, as an inbox entry ref keeps it) are past, so
// expired index and conversation rows stop taking space; reads skip them by the clock already. A value
// too short to hold an expiry is kept, for the read that reports it.
class RefExpiryFilter final : public rocksdb::CompactionFilter {
 public:
  explicit RefExpiryFilter(std::shared_ptr<const Clock> clock) : clock_(std::move(clock)) {}
  bool Filter(int level, const rocksdb::Slice& key, const rocksdb::Slice& value, std::string* new_value,
              bool* value_changed) const override;
  const char* Name() const override { return "qim.InboxRefExpiryFilter"; }

 private:
  std::shared_ptr<const Clock> clock_;
};

// The families' options; `merge` and `filter` must outlive the database. The index and the rows get
// memtable insert hints (insert_hint.h), as the mailbox's entries do: an index row searches the skip list
// from where its (user, conversation)'s previous row went, a row from where its last merge went. Without
// them these searches were a third of the shard workers' CPU at 8,000 msg/s (docs/benchmarks.md, "The
// inbox's cost").
std::array<rocksdb::ColumnFamilyOptions, kSideFamilyCount> side_family_options(
    const std::shared_ptr<rocksdb::MergeOperator>& merge, const rocksdb::CompactionFilter* filter);

// What an attached SideRows reads and writes through: the mailbox's database, its side families, its
// write gate (a full disk, docs/adr/0067) and its log syncer (a write of its own that must be durable when
// it returns waits for it). Valid from attach() until detach().
struct SideDb {
  rocksdb::DB* db = nullptr;
  std::array<rocksdb::ColumnFamilyHandle*, kSideFamilyCount> families{};
  RocksWriteGate* gate = nullptr;
  WalSyncer* syncer = nullptr;
};

class SideRows {
 public:
  virtual ~SideRows() = default;
  // The backend opened its database: from now on `db` is there. An error fails the backend's open (e.g.
  // the rows of an older layout could not be moved in).
  virtual Status attach(const SideDb& db) = 0;
  // The backend is closing its database; nothing may use it after this returns (waits for users).
  virtual void detach() = 0;
};

}  // namespace qim::embedded
