#pragma once
// The schema of a component that keeps its own tables in the deployment's keyspace (history, groups):
// the keyspace and the tables created if missing, and the component's version in qim_schema_version, so a
// keyspace written by a newer binary is refused rather than misread. Shared so every component creates,
// versions and names its keyspace the same way.

#include <span>
#include <string>

#include "core/status.h"
#include "mailbox/scylla/cql/cql_session.h"

namespace qim::scylla {

struct ComponentSchema {
  std::string component;  // its row in qim_schema_version, e.g. "history"
  int version = 1;
  std::string keyspace;
  uint32_t replication_factor = 1;  // for a keyspace created here (SimpleStrategy)
  // CREATE TABLE IF NOT EXISTS statements; "{ks}" is replaced by the keyspace.
  std::span<const char* const> tables;
};

// True for 1..64 letters, digits and underscores: what a keyspace name may be here (it is spliced into
// statements, never bound).
bool plain_identifier(const std::string& s);

// Creates the keyspace, the tables and qim_schema_version if missing, then records the version. Config if
// the keyspace holds a newer version of the component; Transport/Timeout naming the statement otherwise.
Status ensure_component_schema(const cql::Session& session, const ComponentSchema& schema);

// Adds the nullable column `column` of CQL type `type` to `keyspace`.`table` unless it has it (a table
// created before the column existed; docs/adr/0125). A column every older statement leaves unset is safe to
// add while processes run. Tolerates another process adding it at the same time. Transport/Timeout naming
// the statement.
Status ensure_column(const cql::Session& session, const std::string& keyspace, const std::string& table,
                     const std::string& column, const std::string& type);

// Prepares `text` with "{ks}" replaced by `keyspace`. InvalidArgument (bad CQL) or Transport naming the
// component and the statement.
Result<cql::Prepared> prepare_in_keyspace(const cql::Session& session, const std::string& keyspace,
                                          const char* text, std::string_view component);

}  // namespace qim::scylla
