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

Result<cql::Prepared> prepare_in_keyspace(const cql::Session& session, const std::string& keyspace,
                                          const char* text, std::string_view component) {
  const std::string q = fmt::format(fmt::runtime(text), fmt::arg("ks", keyspace));
  return lift(session.prepare(q), std::string(component) + ": prepare " + q.substr(0, 72));
}

}  // namespace qim::scylla
