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
#include <vector>

#include "groups/group_store.h"
#include "mailbox/store_options.h"

namespace qim {

struct GroupStoreOptions {
  std::string backend = "embedded";  // embedded | redis | cql
  std::string dir;                   // embedded
  std::vector<std::string> cql_hosts = {"127.0.0.1"};
  std::string cql_keyspace = "qim";
  uint32_t cql_replication_factor = 1;
  std::vector<std::string> redis_endpoints = {"127.0.0.1:16379"};
  std::string redis_key_prefix = "qim:";
};

// The group store of a deployment whose mailbox store is `store`; `data_dir` holds the embedded one.
GroupStoreOptions group_store_options(const StoreOptions& store, const std::string& data_dir);

// Opens the configured group store. Config for an unknown backend or one not built into this binary (cql
// needs QIM_WITH_CQL); Io, Transport or Timeout when it cannot be opened or reached.
Result<std::unique_ptr<GroupStore>> open_group_store(const GroupStoreOptions& options);

}  // namespace qim
