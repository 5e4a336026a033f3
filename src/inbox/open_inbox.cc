// The inbox factory: the one place that knows every inbox backend (like open_group_store). The redis and
// cql backends join with one branch each, built when their directory's CMakeLists defines
// QIM_WITH_REDIS_INBOX / QIM_WITH_CQL_INBOX on qim_inbox_open.
#include "inbox/open_inbox.h"

#include "inbox/embedded/rocks_inbox.h"
#include "inbox/memory/memory_inbox.h"

#if defined(QIM_WITH_REDIS_INBOX)
#include "inbox/redis/redis_inbox.h"
#endif
#if defined(QIM_WITH_CQL_INBOX)
#include "inbox/cql/cql_inbox.h"
#endif

namespace qim {

std::string inbox_backend_name(const StoreOptions& store) {
  if (store.backend == "scylla" || store.backend == "scylla-lwt") return "cql";
  if (store.backend == "redis") return "redis";
  if (store.backend == "memory") return "memory";
  return "embedded";
}

BackendContext inbox_context(const StoreOptions& store) {
  BackendContext context;
  context.shards = *ShardMap::create(store.shard_count);
  context.clock = store.clock;
  context.retention_ms = store.retention_ms;
  return context;
}

bool inbox_backend_built(const std::string& name) {
  if (name == "memory" || name == "embedded") return true;
#if defined(QIM_WITH_REDIS_INBOX)
  if (name == "redis") return true;
#endif
#if defined(QIM_WITH_CQL_INBOX)
  if (name == "cql") return true;
#endif
  return false;
}

Result<std::unique_ptr<InboxBackend>> open_inbox(const StoreOptions& store, const std::string& data_dir) {
  const std::string backend = inbox_backend_name(store);
  const BackendContext context = inbox_context(store);
  if (backend == "memory") return make_memory_inbox(context);
  if (backend == "redis") {
#if defined(QIM_WITH_REDIS_INBOX)
    return open_redis_inbox(context, store);
#else
    return Error(Errc::kConfig,
                 "QIM_MAILBOX_STORE_BACKEND='redis': the redis inbox is not built into this "
                 "binary yet (src/inbox/redis/)");
#endif
  }
  if (backend == "cql") {
#if defined(QIM_WITH_CQL_INBOX)
    return open_cql_inbox(context, store);
#else
    return Error(Errc::kConfig, "QIM_MAILBOX_STORE_BACKEND='" + store.backend +
                                    "': the CQL inbox is not built into this binary (src/inbox/cql/, needs "
                                    "QIM_WITH_CQL)");
#endif
  }
  if (data_dir.empty()) return Error(Errc::kConfig, "the embedded inbox needs a directory");
  return open_rocks_inbox(context, data_dir + "/inbox");
}

}  // namespace qim
