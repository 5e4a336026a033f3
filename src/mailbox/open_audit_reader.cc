// Like open_store.cc: the backends built in this tree register by their header being present.
#include "mailbox/open_audit_reader.h"

#if __has_include("mailbox/embedded/audit_reader.h")
#include "mailbox/embedded/audit_reader.h"
#define QIM_HAVE_EMBEDDED 1
#endif
#if __has_include("mailbox/redis/audit_reader.h")
#include "mailbox/redis/audit_reader.h"
#define QIM_HAVE_REDIS 1
#endif
#if defined(QIM_WITH_CQL_BACKENDS)
#include "mailbox/scylla/audit_reader.h"
#endif

namespace qim {

Result<std::unique_ptr<AuditReader>> open_audit_reader(const StoreOptions& options) {
  QIM_ASSIGN_OR_RETURN(ShardMap shards, ShardMap::create(options.shard_count));
#ifdef QIM_HAVE_EMBEDDED
  if (options.backend == "embedded")
    return open_embedded_audit_reader(options.data_dir, options.clock->now_ms());
#endif
#ifdef QIM_HAVE_REDIS
  if (options.backend == "redis")
    return open_redis_audit_reader(options.redis_endpoints, options.redis_key_prefix, shards);
#endif
#ifdef QIM_WITH_CQL_BACKENDS
  if (options.backend == "scylla") {
    ScyllaConfig config;
    config.hosts = options.cql_hosts;
    config.keyspace = options.cql_keyspace;
    return open_scylla_audit_reader(config);
  }
#endif
  return Error(Errc::kConfig,
               "QIM_MAILBOX_STORE_BACKEND='" + options.backend +
                   "' has no audit (embedded, redis and scylla do; scylla-lwt is the benchmark's "
                   "baseline and memory keeps nothing)");
}

}  // namespace qim
