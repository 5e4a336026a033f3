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

GroupStoreOptions group_store_options(const StoreOptions& store, const std::string& data_dir) {
  GroupStoreOptions o;
  if (store.backend == "scylla" || store.backend == "scylla-lwt") {
    o.backend = "cql";
  } else if (store.backend == "redis") {
    o.backend = "redis";
  }
  o.dir = data_dir + "/groups";
  o.cql_hosts = store.cql_hosts;
  o.cql_keyspace = store.cql_keyspace;
  o.cql_replication_factor = store.cql_replication_factor;
  o.redis_endpoints = store.redis_endpoints;
  o.redis_key_prefix = store.redis_key_prefix;
  return o;
}

Result<std::unique_ptr<GroupStore>> open_group_store(const GroupStoreOptions& options) {
  if (options.backend == "embedded") {
    if (options.dir.empty()) return Error(Errc::kConfig, "the embedded group store needs a directory");
    QIM_ASSIGN_OR_RETURN(auto store, RocksGroupStore::open(options.dir));
    return std::unique_ptr<GroupStore>(std::move(store));
  }
  if (options.backend == "redis") {
#if defined(QIM_WITH_REDIS_GROUPS)
    RedisGroupOptions r;
    r.endpoints = options.redis_endpoints;
    r.key_prefix = options.redis_key_prefix;
    QIM_ASSIGN_OR_RETURN(auto store, RedisGroupStore::open(r));
    return std::unique_ptr<GroupStore>(std::move(store));
#else
    return Error(Errc::kConfig, "the redis group store is not built into this binary (no hiredis)");
#endif
  }
  if (options.backend == "cql") {
#if defined(QIM_WITH_CQL_GROUPS)
    CqlGroupOptions c;
    c.hosts = options.cql_hosts;
    c.keyspace = options.cql_keyspace;
    c.replication_factor = options.cql_replication_factor;
    QIM_ASSIGN_OR_RETURN(auto store, CqlGroupStore::open(c));
    return std::unique_ptr<GroupStore>(std::move(store));
#else
    return Error(Errc::kConfig, "the CQL group store is not built into this binary (QIM_WITH_CQL=OFF)");
#endif
  }
  return Error(Errc::kConfig,
               "group store backend '" + options.backend + "': expected embedded, redis or cql");
}

}  // namespace qim
