// Opening the CQL backends: connect, create the schema, prepare the statements.
#include "mailbox/scylla/scylla_backend.h"

#include "mailbox/scylla/cql_status.h"
#include "mailbox/scylla/frontier_backend.h"
#include "mailbox/scylla/lwt_form_backend.h"
#include "mailbox/scylla/schema.h"

namespace qim {

Result<std::unique_ptr<StoreBackend>> open_scylla_backend(const BackendContext& context,
                                                          const ScyllaConfig& config) {
  QIM_ASSIGN_OR_RETURN(
      cql::Session session,
      scylla::lift(cql::Session::connect(cql::SessionOptions{
                       .hosts = config.hosts, .request_timeout_ms = config.request_timeout_ms}),
                   "connect to CQL hosts"));
  QIM_RETURN_IF_ERROR(scylla::ensure_schema(
      session, scylla::SchemaOptions{config.keyspace, config.replication_factor, config.lwt_form}));
  std::unique_ptr<scylla::ScyllaFrontierBackend> backend;
  if (config.lwt_form) {
    backend = std::make_unique<scylla::ScyllaLwtFormBackend>(context, config, std::move(session));
  } else {
    backend = std::make_unique<scylla::ScyllaFrontierBackend>(context, config, std::move(session));
  }
  QIM_RETURN_IF_ERROR(backend->prepare());
  return std::unique_ptr<StoreBackend>(std::move(backend));
}

Result<std::unique_ptr<StoreBackend>> open_scylla_backend(const BackendContext& context,
                                                          const StoreOptions& options) {
  ScyllaConfig config;
  config.hosts = options.cql_hosts;
  config.keyspace = options.cql_keyspace;
  config.replication_factor = options.cql_replication_factor;
  config.lwt_form = options.backend == "scylla-lwt";
  config.batch_rows = options.cql_batch_rows;
  return open_scylla_backend(context, config);
}

}  // namespace qim
