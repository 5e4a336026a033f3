#pragma once
// Group commit of the embedded store's write-ahead log, outside RocksDB's write queue (decision 45).
//
// A RocksDB write with `sync = true` fsyncs the log while it leads the database's one write queue, so
// every write queued behind it waits for the fsync, even an unsynced one of another shard: at 2,000
// msg/s 60% of the shard workers' thread switches were writes waiting in that queue. A frontier write
// now goes in unsynced and then waits here: the first caller syncs the log (`DB::SyncWAL`, which
// writers do not wait for) through everything published so far, and callers that arrive meanwhile wait
// for that sync, or the next, to cover their write. One fsync still serves every shard that finished a
// page during the previous one.
//
// Fail closed: once a sync fails, every later call returns that error without syncing, since a write
// the failed sync should have made durable may already be readable in RocksDB. The store must be
// reopened (RocksDB replays its log) to write again.
//
// Thread safety: every method may be called from any thread.

#include <rocksdb/db.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>

#include "core/status.h"
#include "mailbox/embedded/rocks_write_gate.h"

namespace qim::embedded {

class WalSyncer {
 public:
  // `db` (and `gate`, if given) must outlive the syncer. With a gate, no sync is attempted while the
  // database is stopped by a write error (a full disk, rocks_write_gate.h): the call returns that error and
  // does not fail the syncer for good, since no sync failed; once the gate resumes the database (which
  // flushes its memtables) syncing goes on.
  explicit WalSyncer(rocksdb::DB& db, RocksWriteGate* gate = nullptr) : db_(db), gate_(gate) {}

  // Returns once the log is synced through every write published at or before the call (a write that
  // returned before it); Io naming the failure if a sync failed, now or before.
  Status sync_published();
  // OK until a sync fails; then that failure, for readers of what the syncs guard (the frontier).
  Status failure();

 private:
  rocksdb::DB& db_;
  RocksWriteGate* const gate_;
  std::mutex mu_;
  std::condition_variable synced_cv_;
  bool syncing_ = false;         // guarded by mu_: a sync runs without the lock
  uint64_t synced_through_ = 0;  // guarded by mu_: every write at or below this seq is durable
  std::optional<Error> failed_;  // guarded by mu_: the first failed sync, returned ever after
};

}  // namespace qim::embedded
