#include "groups/embedded/rocks_group_store.h"

#include "core/big_endian.h"
#include "groups/group_codec.h"
#include "mailbox/embedded/rocks_info_log.h"

namespace qim {

namespace {

Status rocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return {};
  return Error(s.IsCorruption() ? Errc::kCorruptEntry : Errc::kIo,
               "group store: " + std::string(what) + ": " + s.ToString());
}

std::string meta_key(const GroupId& g) {
  return "g" + g.str();
}
std::string member_prefix(const GroupId& g) {
  return "m" + g.str() + std::string(1, '\0');
}
std::string outcome_prefix(const GroupId& g) {
  return "o" + g.str() + std::string(1, '\0');
}
std::string outcome_key(const GroupId& g, uint64_t offset) {
  std::string k = outcome_prefix(g);
  put_be64(k, offset);
  return k;
}
std::string index_prefix(const UserId& u) {
  return "u" + u.str() + std::string(1, '\0');
}

}  // namespace

Result<std::unique_ptr<RocksGroupStore>> RocksGroupStore::open(const std::string& dir) {
  rocksdb::Options options;
  options.create_if_missing = true;
  // Not a LOG file on the data disk: on a full disk it aborts the process (rocks_info_log.h).
  options.info_log = embedded::rocks_info_log("group store");
  rocksdb::DB* raw = nullptr;
  QIM_RETURN_IF_ERROR(rocks(rocksdb::DB::Open(options, dir, &raw), "open " + dir));
  return std::unique_ptr<RocksGroupStore>(new RocksGroupStore(std::unique_ptr<rocksdb::DB>(raw)));
}

Result<std::optional<std::string>> RocksGroupStore::get(const std::string& key, std::string_view what) {
  std::string value;
  counters_.reads++;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), key, &value);
  if (s.IsNotFound()) return std::optional<std::string>();
  QIM_RETURN_IF_ERROR(rocks(s, what));
  return std::optional<std::string>(std::move(value));
}

Status RocksGroupStore::apply(const GroupChange& change) {
  const std::string okey = outcome_key(change.group, change.offset);
  QIM_ASSIGN_OR_RETURN(auto seen, get(okey, "read outcome"));
  if (seen) return {};  // applied before: idempotent
  rocksdb::WriteBatch batch;
  QIM_RETURN_IF_ERROR(rocks(batch.Put(okey, encode_group_outcome(change.outcome)), "batch"));
  uint64_t inserts = 1, updates = 0;
  if (change.meta) {
    QIM_RETURN_IF_ERROR(rocks(batch.Put(meta_key(change.group), encode_group_meta(*change.meta)), "batch"));
    ++updates;
  }
  for (const auto& m : change.members) {
    QIM_RETURN_IF_ERROR(
        rocks(batch.Put(member_prefix(change.group) + m.user.str(), encode_group_member(m)), "batch"));
    ++updates;
  }
  for (const auto& u : change.joined) {
    QIM_RETURN_IF_ERROR(rocks(batch.Put(index_prefix(u) + change.group.str(), rocksdb::Slice()), "batch"));
    ++inserts;
  }
  for (const auto& u : change.left) {
    QIM_RETURN_IF_ERROR(rocks(batch.Delete(index_prefix(u) + change.group.str()), "batch"));
    ++updates;
  }
  rocksdb::WriteOptions sync;
  sync.sync = true;
  QIM_RETURN_IF_ERROR(rocks(db_->Write(sync, &batch), "apply"));
  counters_.inserts += inserts;
  counters_.updates += updates;
  return {};
}

Result<std::optional<GroupMeta>> RocksGroupStore::meta(const GroupId& group) {
  QIM_ASSIGN_OR_RETURN(auto bytes, get(meta_key(group), "read meta"));
  if (!bytes) return std::optional<GroupMeta>();
  QIM_ASSIGN_OR_RETURN(GroupMeta m, decode_meta_row(group, *bytes));
  return std::optional<GroupMeta>(std::move(m));
}

Result<std::optional<GroupMemberRecord>> RocksGroupStore::member(const GroupId& group, const UserId& user) {
  QIM_ASSIGN_OR_RETURN(auto bytes, get(member_prefix(group) + user.str(), "read member"));
  if (!bytes) return std::optional<GroupMemberRecord>();
  QIM_ASSIGN_OR_RETURN(GroupMemberRecord m, decode_member_row(group, user.str(), *bytes));
  return std::optional<GroupMemberRecord>(std::move(m));
}

Result<std::optional<GroupOpOutcome>> RocksGroupStore::outcome(const GroupId& group, uint64_t offset) {
  QIM_ASSIGN_OR_RETURN(auto bytes, get(outcome_key(group, offset), "read outcome"));
  if (!bytes) return std::optional<GroupOpOutcome>();
  QIM_ASSIGN_OR_RETURN(GroupOpOutcome o, decode_outcome_row(group, offset, *bytes));
  return std::optional<GroupOpOutcome>(std::move(o));
}

Result<std::optional<GroupState>> RocksGroupStore::load(const GroupId& group) {
  QIM_ASSIGN_OR_RETURN(auto m, meta(group));
  if (!m) return std::optional<GroupState>();
  std::vector<GroupMemberRecord> members;
  std::map<uint64_t, GroupOpOutcome> ops;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  const std::string mp = member_prefix(group);
  counters_.reads++;
  for (it->Seek(mp); it->Valid() && it->key().starts_with(mp); it->Next()) {
    const std::string_view user(it->key().data() + mp.size(), it->key().size() - mp.size());
    QIM_ASSIGN_OR_RETURN(
        GroupMemberRecord m,
        decode_member_row(group, user, std::string_view(it->value().data(), it->value().size())));
    members.push_back(std::move(m));
  }
  QIM_RETURN_IF_ERROR(rocks(it->status(), "scan members"));
  const std::string op = outcome_prefix(group);
  counters_.reads++;
  for (it->Seek(op); it->Valid() && it->key().starts_with(op); it->Next()) {
    const uint64_t offset =
        get_be64(std::string_view(it->key().data() + op.size(), it->key().size() - op.size()));
    QIM_ASSIGN_OR_RETURN(
        GroupOpOutcome o,
        decode_outcome_row(group, offset, std::string_view(it->value().data(), it->value().size())));
    ops.emplace(offset, std::move(o));
  }
  QIM_RETURN_IF_ERROR(rocks(it->status(), "scan outcomes"));
  return std::optional<GroupState>(GroupState(*std::move(m), std::move(members), std::move(ops)));
}

Result<std::vector<GroupId>> RocksGroupStore::groups_of(const UserId& user) {
  std::vector<GroupId> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  const std::string p = index_prefix(user);
  counters_.reads++;
  for (it->Seek(p); it->Valid() && it->key().starts_with(p); it->Next()) {
    auto g = GroupId::parse(it->key().ToString().substr(p.size()));
    if (!g.ok())
      return Error(Errc::kCorruptEntry,
                   "group store: index of user '" + user.str() + "': " + g.error().message());
    out.push_back(std::move(g).value());
  }
  QIM_RETURN_IF_ERROR(rocks(it->status(), "scan groups of " + user.str()));
  return out;
}

}  // namespace qim
