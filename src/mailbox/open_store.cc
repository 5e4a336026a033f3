// The backend factory: the one place that knows every backend. Backends built in this tree register by
// their header being present (the scylla ones need the Rust CQL driver, see QIM_WITH_CQL).
#include "mailbox/contract_store.h"
#include "mailbox/memory/memory_backend.h"
#include "mailbox/store_options.h"

#if __has_include("mailbox/embedded/embedded_backend.h")
#include "mailbox/embedded/embedded_backend.h"
#include "mailbox/embedded/side_rows.h"
#define QIM_HAVE_EMBEDDED 1
#endif
#if __has_include("mailbox/redis/redis_backend.h")
#include "mailbox/redis/redis_backend.h"
#define QIM_HAVE_REDIS 1
#endif
#if defined(QIM_WITH_CQL_BACKENDS)
#include "mailbox/scylla/scylla_backend.h"
#endif

namespace qim {

Result<std::unique_ptr<MailboxStore>> open_mailbox_store(const StoreOptions& options, EntrySink* sink) {
  BackendContext context;
  QIM_ASSIGN_OR_RETURN(context.shards, ShardMap::create(options.shard_count));
  context.clock = options.clock;
  context.retention_ms = options.retention_ms;

  std::unique_ptr<StoreBackend> backend;
  if (options.backend == "memory") {
    backend = make_memory_backend(context);
#ifdef QIM_HAVE_EMBEDDED
  } else if (options.backend == "embedded") {
    QIM_ASSIGN_OR_RETURN(backend, open_embedded_backend(context, options.data_dir));
    // The embedded inbox lives in this database (docs/adr/0088): a sink that is one attaches to it, so a
    // process serving the embedded inbox passes it here even if it writes no entries.
    if (auto* side = dynamic_cast<embedded::SideRows*>(sink)) {
      QIM_RETURN_IF_ERROR(embedded_backend_attach(*backend, *side));
    }
#endif
#ifdef QIM_HAVE_REDIS
  } else if (options.backend == "redis") {
    QIM_ASSIGN_OR_RETURN(
        backend, open_redis_backend_with_prefix(context, options.redis_endpoints, options.redis_key_prefix));
#endif
#ifdef QIM_WITH_CQL_BACKENDS
  } else if (options.backend == "scylla" || options.backend == "scylla-lwt") {
    QIM_RETURN_IF_ERROR(check_identity_ttl_covers_replays(options));
    QIM_ASSIGN_OR_RETURN(backend, open_scylla_backend(context, options));
#else
  } else if (options.backend == "scylla" || options.backend == "scylla-lwt") {
    return Error(Errc::kConfig,
                 "QIM_MAILBOX_STORE_BACKEND='" + options.backend +
                     "': the scylla backends were not built into this binary (configured with "
                     "-DQIM_WITH_CQL=OFF, as scripts/run.sh does); build with -DQIM_WITH_CQL=ON "
                     "(needs Rust >= 1.88), e.g. bash scripts/build.sh");
#endif
  } else {
    return Error(Errc::kConfig, "QIM_MAILBOX_STORE_BACKEND='" + options.backend +
                                    "' is not built into this binary (built in: memory, embedded, redis" +
#ifdef QIM_WITH_CQL_BACKENDS
                                    ", scylla, scylla-lwt" +
#endif
                                    ")");
  }
  return std::unique_ptr<MailboxStore>(
      std::make_unique<ContractStore>(std::move(backend), context, options.page_max,
                                      FenceCheck{options.fence_check_ms, options.fence_check_pages}, sink));
}

}  // namespace qim
