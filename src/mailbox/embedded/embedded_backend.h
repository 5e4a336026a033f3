#pragma once
// The embedded backend: the mailbox store on local disk, in one RocksDB database (the default backend;
// SYSTEM.md section 1). Data survives a restart: every write goes through the write-ahead log, and a
// frontier write returns only once the log is synced through it, which makes every write before it
// durable too; no reader of the store sees that frontier before (decision 45: the sync is shared by the
// shards and runs outside RocksDB's write queue). RocksDB locks the directory, so one process owns it:
// that is the single owner the contract assumes. The operators' read-only reader (audit_reader.h)
// may see a frontier whose sync has not returned yet.

#include <memory>
#include <string>

#include "core/status.h"
#include "mailbox/store_backend.h"

namespace rocksdb {
class Env;
}

namespace qim {

namespace embedded {
class SideRows;
}

// Opens (creating if missing) the store in `dir`. Io naming the directory if it cannot be created,
// opened or is locked by another process; CorruptEntry if RocksDB finds it damaged.
Result<std::unique_ptr<StoreBackend>> open_embedded_backend(const BackendContext& context,
                                                            const std::string& dir);

// Test hook: open_embedded_backend with RocksDB's file access through `env` (which must outlive the
// backend), so tests can hold or fail the write-ahead log's syncs.
Result<std::unique_ptr<StoreBackend>> open_embedded_backend_on(const BackendContext& context,
                                                               const std::string& dir, rocksdb::Env* env);

// Attaches `side` (the embedded inbox, side_rows.h) to an open embedded backend: from then on write_entries
// puts the side's rows of every entry into its own batch, and the side reads and writes through this
// database until the backend is destroyed (which detaches it first). `side` must outlive the backend.
// InvalidArgument if `backend` is not embedded or already has a side attached; the side's attach error
// (e.g. a failed move of older rows) otherwise.
Status embedded_backend_attach(StoreBackend& backend, embedded::SideRows& side);

// Test hook: deletes the proof rows of (user, bucket) of every epoch, so tests can check that a missing
// proof fails closed. InvalidArgument if `backend` is not an embedded backend.
Status embedded_backend_drop_proof(StoreBackend& backend, const UserId& user, DayBucket bucket);

}  // namespace qim
