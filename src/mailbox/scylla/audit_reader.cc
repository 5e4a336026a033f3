#include "mailbox/scylla/audit_reader.h"

#include <fmt/format.h>

#include "mailbox/scylla/cql_cells.h"
#include "mailbox/scylla/cql_status.h"

namespace qim {

namespace {

using scylla::cell;
using scylla::lift;

// A range of an int cell as the type it stands for; CorruptEntry naming the column otherwise.
Result<uint32_t> u32_cell(const cql::Row& row, size_t col, const char* column) {
  QIM_ASSIGN_OR_RETURN(int32_t v, cell(row.get_i32(col), column));
  if (v < 0) return Error(Errc::kCorruptEntry, fmt::format("{} {} is negative", column, v));
  return static_cast<uint32_t>(v);
}
Result<Offset> offset_cell(const cql::Row& row, size_t col, const char* column) {
  QIM_ASSIGN_OR_RETURN(int64_t v, cell(row.get_i64(col), column));
  if (v < 0 || static_cast<uint64_t>(v) > kMaxOffset)
    return Error(Errc::kCorruptEntry, fmt::format("{} {} is out of range", column, v));
  return Offset{static_cast<uint64_t>(v)};
}

constexpr const char* kIdentityColumns =
    "shard, epoch, dispatch_id, digest, manifest, canonical_offset, WRITETIME(digest), TTL(digest)";

// A row of kIdentityColumns.
Result<AuditIdentityRow> decode_identity(const cql::Row& row) {
  AuditIdentityRow r;
  QIM_ASSIGN_OR_RETURN(r.shard.value, u32_cell(row, 0, "mailbox_dispatch.shard"));
  QIM_ASSIGN_OR_RETURN(r.epoch.value, u32_cell(row, 1, "mailbox_dispatch.epoch"));
  QIM_ASSIGN_OR_RETURN(r.id, scylla::name_cell<DispatchId>(row, 2, "mailbox_dispatch.dispatch_id"));
  QIM_ASSIGN_OR_RETURN(int64_t digest, cell(row.get_i64(3), "mailbox_dispatch.digest"));
  r.digest = static_cast<uint64_t>(digest);
  QIM_ASSIGN_OR_RETURN(auto manifest, cell(row.get_blob(4), "mailbox_dispatch.manifest"));
  QIM_ASSIGN_OR_RETURN(r.manifest, decode_manifest(std::string_view(
                                       reinterpret_cast<const char*>(manifest.data()), manifest.size())));
  QIM_ASSIGN_OR_RETURN(r.canonical, offset_cell(row, 5, "mailbox_dispatch.canonical_offset"));
  QIM_ASSIGN_OR_RETURN(r.writetime, cell(row.get_i64(6), "WRITETIME(digest)"));
  auto ttl = row.get_i32(7);  // NULL: the row was written without a TTL
  if (ttl.ok()) {
    r.ttl_seconds = *ttl;
  } else if (ttl.code() == cql::CqlErrc::kNull) {
    r.ttl_seconds = -1;
  } else {
    return Error(Errc::kCorruptEntry, "TTL(digest): " + ttl.error().to_string());
  }
  return r;
}

class ScyllaAuditReader : public AuditReader {
 public:
  ScyllaAuditReader(ScyllaConfig config, cql::Session session)
      : config_(std::move(config)), session_(std::move(session)) {}

  std::string_view backend() const override { return "scylla"; }
  bool identity_conflicts_possible() const override { return true; }
  std::vector<std::string> notes() const override {
    return {
        "scylla does not detect two owners writing different payloads for one dispatch id at write time "
        "(ADR-0022 section 2): identity_conflict findings are that case",
        "mailbox_dispatch and mailbox_entry are scanned whole (paged, at the store's consistency); "
        "--shard filters in the client"};
  }

  Status frontiers(const std::vector<ShardId>&, RowPacer& pacer,
                   const std::function<Status(const AuditFrontierRow&)>& visit,
                   const CorruptSink& corrupt) override {
    return scan(
        "SELECT shard, epoch, frontier_offset, WRITETIME(frontier_offset) FROM {}.mailbox_shard_frontier",
        "frontiers", pacer, [&](const cql::Row& row) -> Status {
          auto decoded = [&]() -> Result<AuditFrontierRow> {
            AuditFrontierRow r;
            QIM_ASSIGN_OR_RETURN(r.shard.value, u32_cell(row, 0, "mailbox_shard_frontier.shard"));
            QIM_ASSIGN_OR_RETURN(r.epoch.value, u32_cell(row, 1, "mailbox_shard_frontier.epoch"));
            QIM_ASSIGN_OR_RETURN(r.offset, offset_cell(row, 2, "frontier_offset"));
            QIM_ASSIGN_OR_RETURN(r.writetime, cell(row.get_i64(3), "WRITETIME(frontier_offset)"));
            return r;
          }();
          if (!decoded.ok()) {
            corrupt({"mailbox_shard_frontier (" + row.render(0) + ", " + row.render(1) + ")",
                     decoded.error().message()});
            return {};
          }
          return visit(*decoded);
        });
  }

  Status identities(const std::vector<ShardId>&, RowPacer& pacer,
                    const std::function<Status(const AuditIdentityRow&)>& visit,
                    const CorruptSink& corrupt) override {
    return scan(
        std::string("SELECT ") + kIdentityColumns + " FROM {}.mailbox_dispatch", "identities", pacer,
        [&](const cql::Row& row) -> Status {
          auto decoded = decode_identity(row);
          if (!decoded.ok()) {
            corrupt({"mailbox_dispatch (" + row.render(0) + ", " + row.render(1) + ", " + row.render(2) + ")",
                     decoded.error().message()});
            return {};
          }
          return visit(*decoded);
        });
  }

  Result<std::optional<AuditIdentityRow>> identity(ShardId shard, Epoch epoch,
                                                   const DispatchId& id) override {
    const std::string cql = fmt::format(
        "SELECT {} FROM {}.mailbox_dispatch WHERE shard = ? AND epoch = ? AND "
        "dispatch_id = ?",
        kIdentityColumns, config_.keyspace);
    QIM_ASSIGN_OR_RETURN(
        cql::Rows rows,
        lift(session_.query(cql,
                            cql::Values()
                                .int32(static_cast<int32_t>(shard.value))
                                .int32(static_cast<int32_t>(epoch.value))
                                .text(id.str()),
                            cql::ExecOptions{.consistency = config_.consistency, .idempotent = true}),
             "read dispatch identity"));
    if (rows.empty()) return std::optional<AuditIdentityRow>();
    QIM_ASSIGN_OR_RETURN(AuditIdentityRow row, decode_identity(rows[0]));
    return std::optional(std::move(row));
  }

  Status entries(const std::vector<ShardId>&, RowPacer& pacer,
                 const std::function<Status(const AuditEntryRow&)>& visit,
                 const CorruptSink& corrupt) override {
    return scan(
        "SELECT user_id, epoch, log_offset, message_id FROM {}.mailbox_entry", "entries", pacer,
        [&](const cql::Row& row) -> Status {
          auto decoded = [&]() -> Result<AuditEntryRow> {
            AuditEntryRow r;
            QIM_ASSIGN_OR_RETURN(r.user, scylla::name_cell<UserId>(row, 0, "mailbox_entry.user_id"));
            QIM_ASSIGN_OR_RETURN(uint32_t epoch, u32_cell(row, 1, "mailbox_entry.epoch"));
            QIM_ASSIGN_OR_RETURN(Offset offset, offset_cell(row, 2, "mailbox_entry.log_offset"));
            QIM_ASSIGN_OR_RETURN(r.seq, compose(Epoch{epoch}, offset));
            QIM_ASSIGN_OR_RETURN(int64_t message, cell(row.get_i64(3), "mailbox_entry.message_id"));
            r.message = MessageId{static_cast<uint64_t>(message)};
            return r;
          }();
          if (!decoded.ok()) {
            corrupt({"mailbox_entry (" + row.render(0) + ", " + row.render(1) + ", " + row.render(2) + ")",
                     decoded.error().message()});
            return {};
          }
          return visit(*decoded);
        });
  }

 private:
  // Pages through `query` (with {} the keyspace), one pacer-sized page at a time.
  Status scan(const std::string& query, std::string_view phase, RowPacer& pacer,
              const std::function<Status(const cql::Row&)>& each) {
    const std::string cql = fmt::format(fmt::runtime(query), config_.keyspace);
    cql::ExecOptions options{.consistency = config_.consistency,
                             .page_size = static_cast<int32_t>(pacer.page_size()),
                             .max_rows = 0,
                             .idempotent = true};
    while (true) {
      QIM_ASSIGN_OR_RETURN(cql::Rows rows, lift(session_.query(cql, {}, options), "audit: " + cql));
      for (const cql::Row row : rows) QIM_RETURN_IF_ERROR(each(row));
      pacer.account(rows.size(), phase);
      if (!rows.has_more_pages()) return {};
      options.paging_state = rows.paging_state();
    }
  }

  ScyllaConfig config_;
  cql::Session session_;
};

}  // namespace

Result<std::unique_ptr<AuditReader>> open_scylla_audit_reader(const ScyllaConfig& config) {
  QIM_ASSIGN_OR_RETURN(cql::Session session,
                       lift(cql::Session::connect(cql::SessionOptions{
                                .hosts = config.hosts, .request_timeout_ms = config.request_timeout_ms}),
                            "connect to CQL hosts (QIM_CQL_HOSTS)"));
  QIM_ASSIGN_OR_RETURN(
      cql::Rows tables,
      lift(session.query("SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?",
                         cql::Values().text(config.keyspace)),
           "read the keyspace's tables"));
  for (const char* needed : {"mailbox_shard_frontier", "mailbox_dispatch", "mailbox_entry"}) {
    bool found = false;
    for (const cql::Row row : tables) found = found || (row.get_text(0).ok() && *row.get_text(0) == needed);
    if (!found) {
      return Error(Errc::kNotFound,
                   fmt::format("keyspace {} has no table {} (QIM_CQL_KEYSPACE; `qim schema apply` "
                               "creates the schema)",
                               config.keyspace, needed));
    }
  }
  return std::unique_ptr<AuditReader>(std::make_unique<ScyllaAuditReader>(config, std::move(session)));
}

}  // namespace qim
