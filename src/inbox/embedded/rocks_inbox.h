#pragma once
// The embedded inbox: the InboxBackend in its own RocksDB database (QIM_DATA_DIR/inbox), beside the
// embedded mailbox store (docs/adr/0069-embedded-inbox.md). Rows written through entries_written expire
// like the mailbox's entries (context.entry_ttl_ms() after the write, by context.clock); monotonic cells
// (conversation rows, read marks, receipts, settings) are blind merges under a max operator, so no write
// reads. Every write returns once the database's write-ahead log is synced through it (one group-committed
// fsync shared by concurrent writers): the mailbox's frontier, synced after the entries, must never cover
// an entry whose inbox rows a power loss could still take. A full disk refuses writes and resumes by itself
// (docs/adr/0067). RocksDB locks the directory: one process. docs/adr/0069-embedded-inbox.md.

#include <memory>
#include <string>

#include "core/status.h"
#include "inbox/inbox_backend.h"
#include "mailbox/store_backend.h"

namespace qim {

// Opens (creating if missing) the inbox in `dir`. Io naming the directory if it cannot be created, opened
// or is locked by another process; CorruptEntry if RocksDB finds it damaged.
Result<std::unique_ptr<InboxBackend>> open_rocks_inbox(const BackendContext& context, const std::string& dir);

}  // namespace qim
