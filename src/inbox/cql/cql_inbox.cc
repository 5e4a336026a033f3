#include "inbox/cql/cql_inbox.h"

#include "inbox/cql/cql_inbox_backend.h"

namespace qim {

Result<std::unique_ptr<InboxBackend>> open_cql_inbox(const BackendContext& context,
                                                     const StoreOptions& store) {
  CqlInboxOptions options;
  options.hosts = store.cql_hosts;
  options.keyspace = store.cql_keyspace;
  options.replication_factor = store.cql_replication_factor;
  options.batch_rows = store.cql_batch_rows;
  options.entry_ttl_ms = context.entry_ttl_ms();
  QIM_ASSIGN_OR_RETURN(auto backend, CqlInboxBackend::open(options));
  return std::unique_ptr<InboxBackend>(std::move(backend));
}

}  // namespace qim
