// The history factory: the one place that knows every history backend (like mailbox/open_store.cc).
#include "archiver/open_history_store.h"

#include "archiver/redis/redis_history_store.h"
#include "archiver/rocks_history_store.h"

#if defined(QIM_WITH_CQL_HISTORY)
#include "archiver/cql/cql_history_store.h"
#endif

namespace qim {

Result<HistoryOptions> history_options_from_env(const EnvLookup& getenv, const StoreOptions& store,
                                                const std::string& data_dir) {
  HistoryOptions o;
  if (store.backend == "scylla" || store.backend == "scylla-lwt") {
    o.backend = "scylla";
  } else if (store.backend == "redis") {
    o.backend = "redis";
  }
  if (auto v = getenv("QIM_HISTORY_BACKEND")) {
    if (*v != "embedded" && *v != "scylla" && *v != "redis") {
      return Error(Errc::kConfig, "QIM_HISTORY_BACKEND='" + *v + "': expected embedded, scylla or redis");
    }
    o.backend = *v;
  }
  o.dir = data_dir + "/history";
  o.cql_hosts = store.cql_hosts;
  o.cql_keyspace = store.cql_keyspace;
  o.cql_replication_factor = store.cql_replication_factor;
  o.cql_batch_rows = store.cql_batch_rows;
  o.redis_endpoints = store.redis_endpoints;
  o.redis_key_prefix = store.redis_key_prefix;
  return o;
}

Result<std::unique_ptr<HistoryStore>> open_history_store(const HistoryOptions& options) {
  if (options.backend == "embedded") {
    if (options.dir.empty()) return Error(Errc::kConfig, "the embedded history store needs a directory");
    QIM_ASSIGN_OR_RETURN(auto store, RocksHistoryStore::open(options.dir));
    return std::unique_ptr<HistoryStore>(std::move(store));
  }
  if (options.backend == "redis") {
    RedisHistoryOptions r;
    r.endpoints = options.redis_endpoints;
    r.key_prefix = options.redis_key_prefix;
    QIM_ASSIGN_OR_RETURN(auto store, RedisHistoryStore::open(r));
    return std::unique_ptr<HistoryStore>(std::move(store));
  }
  if (options.backend == "scylla") {
#if defined(QIM_WITH_CQL_HISTORY)
    CqlHistoryOptions c;
    c.hosts = options.cql_hosts;
    c.keyspace = options.cql_keyspace;
    c.replication_factor = options.cql_replication_factor;
    c.batch_rows = options.cql_batch_rows;
    QIM_ASSIGN_OR_RETURN(auto store, CqlHistoryStore::open(c));
    return std::unique_ptr<HistoryStore>(std::move(store));
#else
    return Error(Errc::kConfig,
                 "QIM_HISTORY_BACKEND='scylla' is not built into this binary (QIM_WITH_CQL=OFF)");
#endif
  }
  return Error(Errc::kConfig,
               "QIM_HISTORY_BACKEND='" + options.backend + "': expected embedded, scylla or redis");
}

}  // namespace qim
