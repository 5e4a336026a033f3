#pragma once
// Which HistoryStore a process uses, and the factory that opens it (docs/running.md, QIM_HISTORY_BACKEND).
//
//   QIM_HISTORY_BACKEND = embedded | scylla | redis. Unset: follows QIM_MAILBOX_STORE_BACKEND
//   (memory, embedded -> embedded; scylla, scylla-lwt -> scylla; redis -> redis), so a distributed
//   deployment keeps history where its separate archiver and gateway processes can all reach it.
//
// scylla uses the mailbox store's QIM_CQL_HOSTS / QIM_CQL_KEYSPACE / QIM_CQL_RF, redis its
// QIM_MAILBOX_REDIS / QIM_MAILBOX_REDIS_PREFIX, embedded the directory QIM_DATA_DIR/history.

#include <memory>
#include <string>
#include <vector>

#include "archiver/history_store.h"
#include "mailbox/store_options.h"

namespace qim {

struct HistoryOptions {
  std::string backend = "embedded";  // embedded | scylla | redis
  std::string dir;                   // embedded; empty: <data dir>/history (Pipeline::open fills it)
  std::vector<std::string> cql_hosts = {"127.0.0.1"};
  std::string cql_keyspace = "qim";
  uint32_t cql_replication_factor = 1;
  uint32_t cql_batch_rows = 32;  // QIM_CQL_BATCH_ROWS, as the store's
  std::vector<std::string> redis_endpoints = {"127.0.0.1:16379"};
  std::string redis_key_prefix = "qim:";
};

// The history options from QIM_HISTORY_BACKEND and the (already parsed) store options. Config naming
// QIM_HISTORY_BACKEND for a value other than embedded, scylla or redis.
Result<HistoryOptions> history_options_from_env(const EnvLookup& getenv, const StoreOptions& store,
                                                const std::string& data_dir);

// Opens the configured history store. Config for an unknown backend or one not built into this binary
// (scylla needs QIM_WITH_CQL); Io, Transport or Timeout when it cannot be opened or reached.
Result<std::unique_ptr<HistoryStore>> open_history_store(const HistoryOptions& options);

}  // namespace qim
