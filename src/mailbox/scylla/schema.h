#pragma once
// The CQL schema of the scylla mailbox (ADR-0022) and the pre-ADR "form A" tables of scylla-lwt.
// Created by the store itself, idempotently (IF NOT EXISTS), and versioned in qim_schema_version: a
// keyspace written by a newer schema is refused rather than misread.
//
// Rules the tables keep (ADR-0022 section 2, SYSTEM.md section 8):
// - mailbox_shard_frontier, mailbox_retention_bucket_v2 and mailbox_dispatch are written only USING
//   TIMESTAMP derived from log offsets; never with a wall-clock timestamp, never deleted (a tombstone at
//   wall-clock time would shadow every later offset-timestamped write), never with LWT, never with TWCS.
// - mailbox_retention_meta is written only with LWT.
// - On ScyllaDB, the keyspace must use vnodes, not tablets: LWT is not supported in tablets keyspaces.

#include <string>
#include <vector>

#include "core/status.h"
#include "mailbox/scylla/cql/cql_session.h"

namespace qim::scylla {

inline constexpr int kSchemaVersion = 1;

struct SchemaOptions {
  std::string keyspace = "qim";
  uint32_t replication_factor = 1;
  bool lwt_form = false;  // also create the form-A tables of scylla-lwt
};

// Creates the keyspace and tables if missing and records the schema version. Config if the keyspace
// holds a newer schema version; Transport/Timeout if the cluster cannot be reached.
Status ensure_schema(const cql::Session& session, const SchemaOptions& options);

}  // namespace qim::scylla
