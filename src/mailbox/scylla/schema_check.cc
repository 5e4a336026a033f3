#include "mailbox/scylla/schema_check.h"

#include <fmt/format.h>

#include <set>

#include "mailbox/scylla/cql_status.h"
#include "mailbox/scylla/schema.h"

namespace qim::scylla {

namespace {

// The tables of schema.cc that ADR-0022 puts rules on (the form-A tables of scylla-lwt are not checked).
const std::vector<std::string> kMailboxTables = {
    "mailbox_shard_frontier", "mailbox_dispatch",       "mailbox_entry",     "mailbox_retention_bucket_v2",
    "mailbox_retention_meta", "mailbox_retention_user", "qim_schema_version"};

}  // namespace

Result<SchemaCheck> check_schema(const cql::Session& session, const std::string& keyspace) {
  SchemaCheck out;
  QIM_ASSIGN_OR_RETURN(cql::Rows ks,
                       lift(session.query("SELECT keyspace_name FROM system_schema.keyspaces WHERE "
                                          "keyspace_name = ?",
                                          cql::Values().text(keyspace)),
                            "read system_schema.keyspaces"));
  out.keyspace_exists = !ks.empty();
  if (!out.keyspace_exists) {
    out.problems.push_back("keyspace " + keyspace + " does not exist (`qim admin schema apply` creates it)");
    return out;
  }
  QIM_ASSIGN_OR_RETURN(cql::Rows tables,
                       lift(session.query("SELECT table_name, compaction FROM system_schema.tables WHERE "
                                          "keyspace_name = ?",
                                          cql::Values().text(keyspace)),
                            "read system_schema.tables"));
  std::set<std::string> present;
  for (const cql::Row row : tables) {
    auto name = row.get_text(0);
    if (!name.ok()) continue;
    present.insert(std::string(*name));
    const std::string compaction = row.render(1);
    if (compaction.find("TimeWindowCompactionStrategy") != std::string::npos) {
      out.problems.push_back(
          fmt::format("{}.{} uses TimeWindowCompactionStrategy: refused, its tables are written "
                      "USING TIMESTAMP <log offset> and TWCS windows by write timestamp",
                      keyspace, *name));
    }
  }
  for (const auto& t : kMailboxTables) {
    if (!present.contains(t)) out.problems.push_back(fmt::format("{}.{} is missing", keyspace, t));
  }
  out.notes.push_back(fmt::format("compaction of {} tables checked: none may use TWCS", present.size()));
  if (present.contains("qim_schema_version")) {
    auto v = session.query(
        fmt::format("SELECT version FROM {}.qim_schema_version WHERE component = 'mailbox'", keyspace));
    if (v.ok() && !v->empty() && v->row(0).get_i32(0).ok()) {
      const int version = *v->row(0).get_i32(0);
      if (version != kSchemaVersion)
        out.problems.push_back(
            fmt::format("schema version {} recorded, this binary's is {}", version, kSchemaVersion));
      else
        out.notes.push_back(fmt::format("schema version {}", version));
    } else {
      out.problems.push_back("no mailbox schema version recorded in " + keyspace + ".qim_schema_version");
    }
  }
  // Tablets exist on ScyllaDB only; its system_schema.scylla_keyspaces says whether a keyspace uses them.
  auto tablets =
      session.query("SELECT initial_tablets FROM system_schema.scylla_keyspaces WHERE keyspace_name = ?",
                    cql::Values().text(keyspace));
  if (!tablets.ok()) {
    out.notes.push_back(
        "tablets: not applicable (no system_schema.scylla_keyspaces: the cluster is not "
        "ScyllaDB, e.g. Apache Cassandra, which has no tablets)");
  } else if (!tablets->empty() && !tablets->row(0).is_null(0)) {
    out.problems.push_back("keyspace " + keyspace +
                           " uses tablets: refused, mailbox_retention_meta needs LWT, "
                           "which ScyllaDB does not support in tablets keyspaces (create it with tablets = "
                           "{'enabled': false})");
  } else {
    out.notes.push_back("tablets: not used (vnodes)");
  }
  return out;
}

}  // namespace qim::scylla
