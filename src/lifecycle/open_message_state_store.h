#pragma once
// Which MessageStateStore a process uses, and the factory that opens it. Like the group store
// (groups/open_group_store.h), it follows the mailbox store's engine (QIM_MAILBOX_STORE_BACKEND), so every
// process of a deployment (fanout writes it; the archiver and the gateways read it) reaches the same one:
//
//   memory, embedded   -> RocksDB in QIM_DATA_DIR/messages (one process: `qim up`)
//   redis              -> Redis, QIM_MAILBOX_REDIS / QIM_MAILBOX_REDIS_PREFIX
//   (redis/redis_message_state_store.h) scylla, scylla-lwt -> CQL, QIM_CQL_HOSTS / QIM_CQL_KEYSPACE /
//   QIM_CQL_RF (cql/cql_message_state_store.h)

#include <memory>
#include <string>

#include "lifecycle/message_state_store.h"
#include "mailbox/store_options.h"

namespace qim {

// "embedded", "redis" or "cql".
std::string message_state_backend(const StoreOptions& store);

// Config for a backend not built into this binary or an embedded one without a directory; Io, Transport
// or Timeout when it cannot be opened or reached.
Result<std::unique_ptr<MessageStateStore>> open_message_state_store(const StoreOptions& store,
                                                                    const std::string& data_dir);

}  // namespace qim
