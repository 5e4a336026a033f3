#include "mailbox/scylla/component_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "mailbox/scylla/cql_status.h"

namespace qim::scylla {

namespace {

Status ddl(const cql::Session& session, const std::string& component, const std::string& text) {
  auto done = session.query(text, {}, cql::ExecOptions{.timeout_ms = 60'000});
  if (!done.ok()) return to_error(done.error(), component + " schema: " + text.substr(0, 72));
  return {};
}

}  // namespace

bool plain_identifier(const std::string& s) {
  return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

Status ensure_component_schema(const cql::Session& session, const ComponentSchema& o) {
  const std::string& c = o.component;
  QIM_RETURN_IF_ERROR(ddl(session, c,
                          fmt::format("CREATE KEYSPACE IF NOT EXISTS {} WITH replication = "
                                      "{{'class': 'SimpleStrategy', 'replication_factor': {}}}",
                                      o.keyspace, o.replication_factor)));
  for (const char* t : o.tables)
    QIM_RETURN_IF_ERROR(ddl(session, c, fmt::format(fmt::runtime(t), fmt::arg("ks", o.keyspace))));
  QIM_RETURN_IF_ERROR(
      ddl(session, c,
          fmt::format(
              "CREATE TABLE IF NOT EXISTS {}.qim_schema_version (component text PRIMARY KEY, version int)",
              o.keyspace)));
  auto version = session.query(
      fmt::format("SELECT version FROM {}.qim_schema_version WHERE component = '{}'", o.keyspace, c));
  if (version.ok() && !version->empty()) {
    auto v = version->row(0).get_i32(0);
    if (v.ok() && *v > o.version) {
      return Error(Errc::kConfig, fmt::format("keyspace {} holds {} schema version {}, newer than this "
                                              "binary's {}; refusing to use it",
                                              o.keyspace, c, *v, o.version));
    }
  }
  return ddl(session, c,
             fmt::format("INSERT INTO {}.qim_schema_version (component, version) VALUES ('{}', {})",
                         o.keyspace, c, o.version));
}

Status ensure_column(const cql::Session& session, const std::string& keyspace, const std::string& table,
                     const std::string& column, const std::string& type) {
  std::string ks = keyspace;  // unquoted names are stored lower-case in system_schema
  std::transform(ks.begin(), ks.end(), ks.begin(), [](unsigned char ch) { return std::tolower(ch); });
  auto has_column = [&]() -> Result<bool> {
    QIM_ASSIGN_OR_RETURN(
        cql::Rows rows,
        lift(session.query("SELECT column_name FROM system_schema.columns WHERE "
                           "keyspace_name = ? AND table_name = ?",
                           cql::Values().text(ks).text(table), cql::ExecOptions{.timeout_ms = 60'000}),
             "schema: read the columns of " + table));
    for (const auto& r : rows) {
      if (auto name = r.get_text(0); name.ok() && *name == column) return true;
    }
    return false;
  };
  QIM_ASSIGN_OR_RETURN(bool present, has_column());
  if (present) return {};
  Status added =
      ddl(session, table, fmt::format("ALTER TABLE {}.{} ADD {} {}", keyspace, table, column, type));
  if (added.ok()) return {};
  // Another process may have added it between the read and the ALTER: then it is there now.
  QIM_ASSIGN_OR_RETURN(present, has_column());
  return present ? Status() : added;
}

Result<cql::Prepared> prepare_in_keyspace(const cql::Session& session, const std::string& keyspace,
                                          const char* text, std::string_view component) {
  const std::string q = fmt::format(fmt::runtime(text), fmt::arg("ks", keyspace));
  return lift(session.prepare(q), std::string(component) + ": prepare " + q.substr(0, 72));
}

}  // namespace qim::scylla
