#pragma once
// The embedded backend: the mailbox store on local disk, in one RocksDB database (the default backend;
// SYSTEM.md section 1). Data survives a restart: every write goes through the write-ahead log, and a
// frontier write is synced before it returns, which makes every write before it durable too.
// RocksDB locks the directory, so one process owns it: that is the single owner the contract assumes.

#include <memory>
#include <string>

#include "core/status.h"
#include "mailbox/store_backend.h"

namespace qim {

// Opens (creating if missing) the store in `dir`. Io naming the directory if it cannot be created,
// opened or is locked by another process; CorruptEntry if RocksDB finds it damaged.
Result<std::unique_ptr<StoreBackend>> open_embedded_backend(const BackendContext& context,
                                                            const std::string& dir);

// Test hook: deletes the proof rows of (user, bucket) of every epoch, so tests can check that a missing
// proof fails closed. InvalidArgument if `backend` is not an embedded backend.
Status embedded_backend_drop_proof(StoreBackend& backend, const UserId& user, DayBucket bucket);

}  // namespace qim
