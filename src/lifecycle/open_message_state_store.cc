// The message state store factory: the one place that knows every backend (like open_group_store).
#include "lifecycle/open_message_state_store.h"

#if defined(QIM_WITH_REDIS_MESSAGES)
#include "lifecycle/redis/redis_message_state_store.h"
#endif
#if defined(QIM_WITH_CQL_MESSAGES)
#include "lifecycle/cql/cql_message_state_store.h"
#endif

namespace qim {

std::string message_state_backend(const StoreOptions& store) {
  if (store.backend == "scylla" || store.backend == "scylla-lwt") return "cql";
  if (store.backend == "redis") return "redis";
  return "embedded";
}

Result<std::unique_ptr<MessageStateStore>> open_message_state_store(const StoreOptions& store,
                                                                    const std::string& data_dir) {
  const std::string backend = message_state_backend(store);
  if (backend == "redis") {
#if defined(QIM_WITH_REDIS_MESSAGES)
    RedisMessageStateOptions r;
    r.endpoints = store.redis_endpoints;
    r.key_prefix = store.redis_key_prefix;
    QIM_ASSIGN_OR_RETURN(auto opened, RedisMessageStateStore::open(r));
    return std::unique_ptr<MessageStateStore>(std::move(opened));
#else
    return Error(Errc::kConfig, "the redis message state store is not built into this binary (no hiredis)");
#endif
  }
  if (backend == "cql") {
#if defined(QIM_WITH_CQL_MESSAGES)
    CqlMessageStateOptions c;
    c.hosts = store.cql_hosts;
    c.keyspace = store.cql_keyspace;
    c.replication_factor = store.cql_replication_factor;
    QIM_ASSIGN_OR_RETURN(auto opened, CqlMessageStateStore::open(c));
    return std::unique_ptr<MessageStateStore>(std::move(opened));
#else
    return Error(Errc::kConfig,
                 "the CQL message state store is not built into this binary (QIM_WITH_CQL=OFF)");
#endif
  }
  if (data_dir.empty()) return Error(Errc::kConfig, "the embedded message state store needs a directory");
  return open_rocks_message_state_store(data_dir + "/messages");
}

}  // namespace qim
