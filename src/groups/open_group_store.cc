// The group store factory: the one place that knows every group store backend (like open_history_store).
#include "groups/open_group_store.h"

#include "groups/embedded/rocks_group_store.h"

#if defined(QIM_WITH_REDIS_GROUPS)
#include "groups/redis/redis_group_store.h"
#endif
#if defined(QIM_WITH_CQL_GROUPS)
#include "groups/cql/cql_group_store.h"
#endif

namespace qim {

std::string group_store_backend(const StoreOptions& store) {
  if (store.backend == "scylla" || store.backend == "scylla-lwt") return "cql";
  if (store.backend == "redis") return "redis";
  return "embedded";
}

Result<std::unique_ptr<GroupStore>> open_group_store(const StoreOptions& store, const std::string& data_dir) {
  const std::string backend = group_store_backend(store);
  if (backend == "redis") {
#if defined(QIM_WITH_REDIS_GROUPS)
    RedisGroupOptions r;
    r.endpoints = store.redis_endpoints;
    r.key_prefix = store.redis_key_prefix;
    QIM_ASSIGN_OR_RETURN(auto opened, RedisGroupStore::open(r));
    return std::unique_ptr<GroupStore>(std::move(opened));
#else
    return Error(Errc::kConfig, "the redis group store is not built into this binary (no hiredis)");
#endif
  }
  if (backend == "cql") {
#if defined(QIM_WITH_CQL_GROUPS)
    CqlGroupOptions c;
    c.hosts = store.cql_hosts;
    c.keyspace = store.cql_keyspace;
    c.replication_factor = store.cql_replication_factor;
    QIM_ASSIGN_OR_RETURN(auto opened, CqlGroupStore::open(c));
    return std::unique_ptr<GroupStore>(std::move(opened));
#else
    return Error(Errc::kConfig, "the CQL group store is not built into this binary (QIM_WITH_CQL=OFF)");
#endif
  }
  if (data_dir.empty()) return Error(Errc::kConfig, "the embedded group store needs a directory");
  QIM_ASSIGN_OR_RETURN(auto opened, RocksGroupStore::open(data_dir + "/groups"));
  return std::unique_ptr<GroupStore>(std::move(opened));
}

}  // namespace qim
