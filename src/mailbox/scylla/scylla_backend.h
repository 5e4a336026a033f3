#pragma once
// The scylla MailboxStore backends on CQL (ScyllaDB; Apache Cassandra speaks the same protocol):
// - "scylla": ADR-0022. One frontier row per (shard, epoch) written USING TIMESTAMP offset, bucket proofs
//   USING TIMESTAMP offset, identity rows USING TIMESTAMP 2^48-1-offset with a 31-day TTL, zero LWT on
//   the hot path (ledger registration only, cached once per user and day), page limit 64.
// - "scylla-lwt": the pre-ADR "form A" (per-lane W and source rows, identity and proofs by LWT), page
//   limit 1, kept only as the benchmark's baseline.

#include <memory>
#include <string>
#include <vector>

#include "mailbox/scylla/cql/cql_session.h"
#include "mailbox/store_backend.h"
#include "mailbox/store_options.h"

namespace qim {

struct ScyllaConfig {
  std::vector<std::string> hosts = {"127.0.0.1"};
  std::string keyspace = "qim";
  uint32_t replication_factor = 1;
  cql::Consistency consistency = cql::Consistency::kQuorum;  // every plain read and write
  uint32_t request_timeout_ms = 5000;
  bool lwt_form = false;  // "scylla-lwt"
  // The page's identity writes, entries and proofs go as UNLOGGED batches of at most this many rows
  // (and 16 KiB); 1 sends each row alone.
  uint32_t batch_rows = 32;
};

// Connects, creates the schema if missing, prepares the statements. Transport if no host answers;
// Config if the keyspace holds a newer schema.
Result<std::unique_ptr<StoreBackend>> open_scylla_backend(const BackendContext& context,
                                                          const ScyllaConfig& config);
// From the store options (QIM_CQL_HOSTS, QIM_CQL_KEYSPACE, QIM_CQL_RF, QIM_MAILBOX_STORE_BACKEND).
Result<std::unique_ptr<StoreBackend>> open_scylla_backend(const BackendContext& context,
                                                          const StoreOptions& options);

}  // namespace qim
