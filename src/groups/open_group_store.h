#pragma once
// Which GroupStore a process uses, and the factory that opens it. The group store follows the mailbox
// store's engine (QIM_MAILBOX_STORE_BACKEND), as history does, so every process of a deployment (the
// gateway reads it, fanout writes it) reaches the same one:
//
//   memory, embedded   -> RocksDB in QIM_DATA_DIR/groups (one process: `qim up`)
//   redis              -> Redis, QIM_MAILBOX_REDIS / QIM_MAILBOX_REDIS_PREFIX (redis/redis_group_store.h)
//   scylla, scylla-lwt -> CQL, QIM_CQL_HOSTS / QIM_CQL_KEYSPACE / QIM_CQL_RF (cql/cql_group_store.h)

#include <memory>
#include <string>

#include "groups/group_store.h"
#include "mailbox/store_options.h"

namespace qim {

// "embedded", "redis" or "cql": the group store of a deployment whose mailbox store is `store`.
std::string group_store_backend(const StoreOptions& store);

// Opens the group store of a deployment whose mailbox store is `store` (its engine's addresses, key prefix
// or keyspace); the embedded one in `data_dir`/groups. Config for a backend not built into this binary
// (cql needs QIM_WITH_CQL); Io, Transport or Timeout when it cannot be opened or reached.
Result<std::unique_ptr<GroupStore>> open_group_store(const StoreOptions& store, const std::string& data_dir);

}  // namespace qim
