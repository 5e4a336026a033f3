#pragma once
// History on local disk (RocksDB), for the embedded deployment: two rows per message, as ADR-0018 counts
// them,
//
//   'm' | be64(message id)                           -> the message (mailbox/message_codec.h)
//   'c' | conversation | 0x00 | be64(message id)     -> (empty): the conversation's index
//
// written together in one batch, so the index never names a missing message. Message ids of a
// conversation grow with its Outbox offsets (one conversation, one Outbox partition), so the index sorts
// a conversation oldest to newest and HISTORY walks it backwards.

#include <rocksdb/db.h>

#include <memory>
#include <string>

#include "archiver/history_store.h"
#include "mailbox/embedded/rocks_write_gate.h"

namespace qim {

class RocksHistoryStore final : public HistoryStore {
 public:
  // Opens (creating if missing) the store in `dir`. Io if it cannot be opened or another process holds it.
  static Result<std::unique_ptr<RocksHistoryStore>> open(const std::string& dir);

  // Idempotent upsert of both rows in one batch; InvalidArgument for a message out of bounds. Not synced
  // by itself: call sync() before relying on it surviving a power loss.
  Status append(const Message& message) override;
  // Every message checked first, then all rows in one batch.
  Status append_all(std::span<const Message> messages) override;
  // Newest first, strictly before `query.before`. InvalidArgument for a limit outside 1..200 or an empty
  // conversation; CorruptEntry naming the conversation and id if an index row names a message that is
  // missing, does not decode, or holds another id or conversation.
  Result<HistoryPage> read(const HistoryQuery& query) override;
  OpCounts op_counts() const override { return counters_.snapshot(); }

  // Makes every append so far durable (fsyncs the write-ahead log).
  Status sync() override;

  // Test-only: the raw RocksDB, so the contract suite can plant a row that does not decode.
  rocksdb::DB& raw_db() { return *db_; }

 private:
  RocksHistoryStore(std::unique_ptr<rocksdb::DB> db, std::shared_ptr<embedded::RocksWriteGate> gate)
      : gate_(std::move(gate)), db_(std::move(db)) {}

  std::shared_ptr<embedded::RocksWriteGate> gate_;  // the database's listener: outlives it
  std::unique_ptr<rocksdb::DB> db_;
  OpCounters counters_;
};

}  // namespace qim
