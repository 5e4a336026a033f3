#pragma once
// `qim admin schema check` / `apply` on CQL (docs/operations.md): what the keyspace must keep for
// ADR-0022 to hold, read from system_schema.
//   - every table of the schema exists, and the recorded schema version is this binary's;
//   - no mailbox table uses TimeWindowCompactionStrategy (it windows by write timestamp, and these
//     tables are written with log offsets as timestamps, ADR-0022 section 2);
//   - the keyspace does not use tablets: mailbox_retention_meta is LWT-only and ScyllaDB does not
//     support LWT in tablets keyspaces. Read from system_schema.scylla_keyspaces (initial_tablets);
//     Apache Cassandra has no tablets and no such table, so there the check reports "not applicable".

#include <string>
#include <vector>

#include "core/status.h"
#include "mailbox/scylla/cql/cql_session.h"

namespace qim::scylla {

struct SchemaCheck {
  bool keyspace_exists = false;
  std::vector<std::string> problems;  // each names the table or keyspace and what is wrong
  std::vector<std::string> notes;     // what was checked, and what could not be
  bool ok() const { return keyspace_exists && problems.empty(); }
};

// Reads the keyspace's schema. Transport/Timeout when the cluster cannot be read.
Result<SchemaCheck> check_schema(const cql::Session& session, const std::string& keyspace);

}  // namespace qim::scylla
