#include "groups/cql/cql_group_store.h"

#include "core/big_endian.h"
#include "core/mailbox_seq.h"
#include "groups/group_codec.h"
#include "mailbox/scylla/component_schema.h"
#include "mailbox/scylla/cql_status.h"
#include "mailbox/scylla/write_timestamps.h"

namespace qim {

namespace {

using cql::Values;
using scylla::lift;

inline constexpr int kGroupsSchemaVersion = 1;
enum RowKind : int32_t { kMetaRow = 0, kMemberRow = 1, kOutcomeRow = 2 };
const std::string kMetaKey(1, '\0');

// {ks} is replaced by the keyspace.
const char* const kTables[] = {
    // Every row of a group in its one partition: load() is one partition read, apply() one batch.
    R"(CREATE TABLE IF NOT EXISTS {ks}.group_rows (
         group_id text, kind int, row_key blob, row blob,
         PRIMARY KEY (group_id, kind, row_key)))",
    // The groups a user is a member of now: GROUPS is one partition read.
    R"(CREATE TABLE IF NOT EXISTS {ks}.user_groups (
         user_id text, group_id text, PRIMARY KEY (user_id, group_id)))",
};

std::string offset_key(uint64_t offset) {
  std::string k;
  put_be64(k, offset);
  return k;
}

std::string bytes_of(std::span<const uint8_t> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

uint64_t pages_of(size_t rows) {
  return rows / CqlGroupStore::kLoadPage + 1;
}

}  // namespace

Result<std::unique_ptr<CqlGroupStore>> CqlGroupStore::open(const CqlGroupOptions& options) {
  if (!scylla::plain_identifier(options.keyspace)) {
    return Error(Errc::kConfig, "group keyspace '" + options.keyspace +
                                    "': expected 1..64 letters, digits and underscores (QIM_CQL_KEYSPACE)");
  }
  QIM_ASSIGN_OR_RETURN(cql::Session session,
                       lift(cql::Session::connect(cql::SessionOptions{
                                .hosts = options.hosts, .request_timeout_ms = options.request_timeout_ms}),
                            "groups: connect to CQL hosts"));
  QIM_RETURN_IF_ERROR(scylla::ensure_component_schema(
      session, scylla::ComponentSchema{.component = "groups",
                                       .version = kGroupsSchemaVersion,
                                       .keyspace = options.keyspace,
                                       .replication_factor = options.replication_factor,
                                       .tables = kTables}));
  std::unique_ptr<CqlGroupStore> store(new CqlGroupStore(options, std::move(session)));
  QIM_RETURN_IF_ERROR(store->prepare());
  return store;
}

Status CqlGroupStore::prepare() {
  auto one = [this](cql::Prepared& into, const char* text) -> Status {
    QIM_ASSIGN_OR_RETURN(into, scylla::prepare_in_keyspace(session_, options_.keyspace, text, "groups"));
    return {};
  };
  QIM_RETURN_IF_ERROR(
      one(row_write_, "INSERT INTO {ks}.group_rows (group_id, kind, row_key, row) VALUES (?, ?, ?, ?)"));
  QIM_RETURN_IF_ERROR(
      one(row_read_, "SELECT row FROM {ks}.group_rows WHERE group_id = ? AND kind = ? AND row_key = ?"));
  QIM_RETURN_IF_ERROR(one(rows_read_, "SELECT kind, row_key, row FROM {ks}.group_rows WHERE group_id = ?"));
  QIM_RETURN_IF_ERROR(one(index_write_, "INSERT INTO {ks}.user_groups (user_id, group_id) VALUES (?, ?)"));
  QIM_RETURN_IF_ERROR(one(index_delete_, "DELETE FROM {ks}.user_groups WHERE user_id = ? AND group_id = ?"));
  return one(index_read_, "SELECT group_id FROM {ks}.user_groups WHERE user_id = ?");
}

Result<std::optional<std::string>> CqlGroupStore::read_row(const GroupId& group, int32_t kind,
                                                           std::string_view key, std::string_view what) {
  counters_.reads++;
  QIM_ASSIGN_OR_RETURN(
      cql::Rows rows,
      lift(session_.execute(row_read_, Values().text(group.str()).int32(kind).blob(key),
                            cql::ExecOptions{.consistency = options_.consistency, .idempotent = true}),
           "groups: read " + std::string(what) + " of " + group.str()));
  if (rows.empty()) return std::optional<std::string>();
  auto cell = rows[0].get_blob(0);
  if (!cell.ok()) return corrupt_group_row(group, what, "row: " + cell.error().to_string());
  return std::optional<std::string>(bytes_of(*cell));
}

Result<cql::Rows> CqlGroupStore::read_partition(const cql::Prepared& statement, const std::string& key,
                                                std::string_view what) {
  auto rows = session_.execute(
      statement, Values().text(key),
      cql::ExecOptions{
          .consistency = options_.consistency, .page_size = kLoadPage, .max_rows = -1, .idempotent = true});
  QIM_ASSIGN_OR_RETURN(cql::Rows all, lift(std::move(rows), "groups: " + std::string(what) + " " + key));
  counters_.reads += pages_of(all.size());
  return all;
}

Status CqlGroupStore::apply(const GroupChange& change) {
  QIM_ASSIGN_OR_RETURN(int64_t ts, scylla::monotonic_max_timestamp(Offset{change.offset}, "group rows"));
  const std::string okey = offset_key(change.offset);
  QIM_ASSIGN_OR_RETURN(auto seen, read_row(change.group, kOutcomeRow, okey, "outcome"));
  if (seen) return {};  // decided before: idempotent

  const cql::ExecOptions write{.consistency = options_.consistency, .timestamp_us = ts, .idempotent = true};
  const std::string group = change.group.str();
  // The index rows first: until the batch below lands, the op is undecided and decided again the same.
  std::vector<cql::PendingResult> pending;
  for (const auto& u : change.joined)
    pending.push_back(session_.execute_async(index_write_, Values().text(u.str()).text(group), write));
  for (const auto& u : change.left)
    pending.push_back(session_.execute_async(index_delete_, Values().text(u.str()).text(group), write));
  QIM_RETURN_IF_ERROR(lift(cql::wait_all(pending), "groups: write the user index of " + group));

  // One partition: the replica applies the batch whole; unlogged, as a batch log protects nothing here.
  cql::Batch batch(cql::BatchType::kUnlogged);
  batch.add(row_write_,
            Values().text(group).int32(kOutcomeRow).blob(okey).blob(encode_group_outcome(change.outcome)));
  if (change.meta)
    batch.add(row_write_,
              Values().text(group).int32(kMetaRow).blob(kMetaKey).blob(encode_group_meta(*change.meta)));
  for (const auto& m : change.members)
    batch.add(row_write_,
              Values().text(group).int32(kMemberRow).blob(m.user.str()).blob(encode_group_member(m)));
  QIM_RETURN_IF_ERROR(lift(session_.batch(batch, write), "groups: write the rows of " + group));
  counters_.inserts += 1 + change.joined.size();
  counters_.updates += (change.meta ? 1 : 0) + change.members.size() + change.left.size();
  return {};
}

Result<std::optional<GroupMeta>> CqlGroupStore::meta(const GroupId& group) {
  QIM_ASSIGN_OR_RETURN(auto bytes, read_row(group, kMetaRow, kMetaKey, "meta"));
  if (!bytes) return std::optional<GroupMeta>();
  QIM_ASSIGN_OR_RETURN(GroupMeta m, decode_meta_row(group, *bytes));
  return std::optional<GroupMeta>(std::move(m));
}

Result<std::optional<GroupMemberRecord>> CqlGroupStore::member(const GroupId& group, const UserId& user) {
  QIM_ASSIGN_OR_RETURN(auto bytes, read_row(group, kMemberRow, user.str(), "member " + user.str()));
  if (!bytes) return std::optional<GroupMemberRecord>();
  QIM_ASSIGN_OR_RETURN(GroupMemberRecord m, decode_member_row(group, user.str(), *bytes));
  return std::optional<GroupMemberRecord>(std::move(m));
}

Result<std::optional<GroupOpOutcome>> CqlGroupStore::outcome(const GroupId& group, uint64_t offset) {
  QIM_ASSIGN_OR_RETURN(
      auto bytes, read_row(group, kOutcomeRow, offset_key(offset), "outcome at " + std::to_string(offset)));
  if (!bytes) return std::optional<GroupOpOutcome>();
  QIM_ASSIGN_OR_RETURN(GroupOpOutcome o, decode_outcome_row(group, offset, *bytes));
  return std::optional<GroupOpOutcome>(std::move(o));
}

Result<std::optional<GroupState>> CqlGroupStore::load(const GroupId& group) {
  QIM_ASSIGN_OR_RETURN(cql::Rows rows, read_partition(rows_read_, group.str(), "load"));
  std::optional<GroupMeta> meta;
  std::vector<GroupMemberRecord> members;
  std::map<uint64_t, GroupOpOutcome> ops;
  for (const cql::Row row : rows) {
    const std::string where = "row " + std::to_string(row.index());
    auto kind = row.get_i32(0);
    auto key = row.get_blob(1);
    auto bytes = row.get_blob(2);
    if (!kind.ok() || !key.ok() || !bytes.ok()) return corrupt_group_row(group, where, "a cell is missing");
    const std::string k = bytes_of(*key), v = bytes_of(*bytes);
    switch (*kind) {
      case kMetaRow: {
        QIM_ASSIGN_OR_RETURN(GroupMeta m, decode_meta_row(group, v));
        meta = std::move(m);
        break;
      }
      case kMemberRow: {
        QIM_ASSIGN_OR_RETURN(GroupMemberRecord m, decode_member_row(group, k, v));
        members.push_back(std::move(m));
        break;
      }
      case kOutcomeRow: {
        if (k.size() != 8) return corrupt_group_row(group, where, "an outcome key is not 8 bytes");
        const uint64_t offset = get_be64(k);
        QIM_ASSIGN_OR_RETURN(GroupOpOutcome o, decode_outcome_row(group, offset, v));
        ops.emplace(offset, std::move(o));
        break;
      }
      default:
        return corrupt_group_row(group, where, "unknown kind " + std::to_string(*kind));
    }
  }
  if (!meta) return std::optional<GroupState>();
  return std::optional<GroupState>(GroupState(*std::move(meta), std::move(members), std::move(ops)));
}

Result<std::vector<GroupId>> CqlGroupStore::groups_of(const UserId& user) {
  QIM_ASSIGN_OR_RETURN(cql::Rows rows, read_partition(index_read_, user.str(), "read the groups of"));
  std::vector<GroupId> out;
  out.reserve(rows.size());
  for (const cql::Row row : rows) {
    auto text = row.get_text(0);
    auto g = text.ok() ? GroupId::parse(*text) : Result<GroupId>(Error(Errc::kCorruptEntry, "no group id"));
    if (!g.ok())
      return Error(Errc::kCorruptEntry,
                   "group store: index of user '" + user.str() + "': " + g.error().message());
    out.push_back(std::move(g).value());
  }
  return out;
}

}  // namespace qim
