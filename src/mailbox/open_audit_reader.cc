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
#include "mailbox/scylla/cql_status.h"
#include "mailbox/scylla/schema.h"
#include "mailbox/scylla/schema_check.h"
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

Result<SchemaOutcome> store_schema(const StoreOptions& options, bool apply) {
  SchemaOutcome out;
#ifdef QIM_WITH_CQL_BACKENDS
  if (options.backend == "scylla" || options.backend == "scylla-lwt") {
    QIM_ASSIGN_OR_RETURN(cql::Session session,
                         scylla::lift(cql::Session::connect(cql::SessionOptions{.hosts = options.cql_hosts}),
                                      "connect to CQL hosts (QIM_CQL_HOSTS)"));
    QIM_ASSIGN_OR_RETURN(scylla::SchemaCheck check, scylla::check_schema(session, options.cql_keyspace));
    // A keyspace that exists with a rule broken is not something apply may paper over: refuse.
    bool unfixable = false;
    for (const auto& p : check.problems) unfixable = unfixable || p.find("is missing") == std::string::npos;
    if (apply && (!check.keyspace_exists || !unfixable)) {
      QIM_RETURN_IF_ERROR(scylla::ensure_schema(
          session, scylla::SchemaOptions{options.cql_keyspace, options.cql_replication_factor,
                                         options.backend == "scylla-lwt"}));
      out.applied = true;
      QIM_ASSIGN_OR_RETURN(check, scylla::check_schema(session, options.cql_keyspace));
    }
    out.problems = std::move(check.problems);
    out.notes = std::move(check.notes);
    return out;
  }
#endif
  (void)apply;
  out.applicable = false;
  out.notes.push_back("QIM_MAILBOX_STORE_BACKEND=" + options.backend +
                      " keeps no schema to check or apply (only the scylla store has one)");
  return out;
}

}  // namespace qim
