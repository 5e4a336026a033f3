#pragma once
// The embedded inbox: the InboxBackend in column families of the embedded mailbox store's own RocksDB
// database (docs/adr/0088-embedded-inbox-in-the-mailbox-db.md; rows: inbox_rows.h, families:
// mailbox/embedded/side_rows.h). It is attached to the mailbox backend once that is open
// (open_mailbox_store does it when given this inbox as its sink; attach_rocks_inbox otherwise). As the
// store's sink it writes every entry's index row and conversation row max as one unsynced batch per call
// into that database's write-ahead log, before write_chunks answers: the next frontier write's log sync
// makes them durable with the entries, so the inbox has no fsync of its own. Rows expire like the mailbox's
// entries (the same expiry, from the same write); monotonic cells (conversation rows, read marks, receipts,
// settings) are blind merges under a max operator, so no write reads. A read mark, receipt or setting returns
// once the database's log is synced through it (the mailbox's group commit). Until attached, and after the
// store is closed, every call returns Config.

#include <memory>
#include <string>

#include "core/status.h"
#include "inbox/inbox_backend.h"
#include "mailbox/store_backend.h"

namespace qim {

// An embedded inbox, not attached yet. `legacy_dir` is where decision 69 kept the inbox in a database of
// its own (QIM_DATA_DIR/inbox): if one is there when the inbox attaches, its rows move into the mailbox's
// database and the directory is removed (rocks_inbox_move.h). Never fails today (a Result for the
// factory's sake).
Result<std::unique_ptr<InboxBackend>> open_rocks_inbox(const BackendContext& context,
                                                       const std::string& legacy_dir);

// Attaches an inbox of open_rocks_inbox to an open embedded mailbox backend (embedded_backend_attach):
// InvalidArgument if either is of another engine or the backend has an inbox already; the move's error
// (Io, CorruptEntry) if an older inbox's rows could not be moved in. The backend detaches it when
// destroyed; `inbox` must outlive it.
Status attach_rocks_inbox(InboxBackend& inbox, StoreBackend& mailbox);

}  // namespace qim
