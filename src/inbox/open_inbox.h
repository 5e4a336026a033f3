#pragma once
// Which InboxBackend a process uses, and the factory that opens it. The inbox follows the mailbox store's
// engine (QIM_MAILBOX_STORE_BACKEND), since it is written beside the entries (mailbox/entry_sink.h) and
// must live and expire as they do:
//
//   memory             -> in process (inbox/memory/memory_inbox.h)
//   embedded           -> families of the mailbox store's RocksDB, attached by open_mailbox_store (given
//                         the inbox as its sink); an older QIM_DATA_DIR/inbox moves in (rocks_inbox.h)
//   redis              -> the mailbox Redis, QIM_MAILBOX_REDIS / QIM_MAILBOX_REDIS_PREFIX (inbox/redis/)
//   scylla, scylla-lwt -> CQL, QIM_CQL_HOSTS / QIM_CQL_KEYSPACE / QIM_CQL_RF (inbox/cql/)

#include <memory>
#include <string>

#include "inbox/inbox_backend.h"
#include "mailbox/store_backend.h"
#include "mailbox/store_options.h"

namespace qim {

// "memory", "embedded", "redis" or "cql": the inbox of a deployment whose mailbox store is `store`.
std::string inbox_backend_name(const StoreOptions& store);

// The context an inbox backend is opened with, from the store's options (clock, retention: its rows
// expire with the entries).
BackendContext inbox_context(const StoreOptions& store);

// Whether this binary has the inbox backend `name` (inbox_backend_name): memory and embedded always.
bool inbox_backend_built(const std::string& name);

// Opens the inbox of a deployment whose mailbox store is `store`; the embedded one is usable once
// open_mailbox_store was given it as its sink (its older database `data_dir`/inbox moves in then). Config for
// a backend not built into this binary; Io, Transport or Timeout when it cannot be opened or reached.
Result<std::unique_ptr<InboxBackend>> open_inbox(const StoreOptions& store, const std::string& data_dir);

}  // namespace qim
