#pragma once
// The group store on local disk (RocksDB), for the embedded deployment (QIM_DATA_DIR/groups). Rows:
//
//   'g' | group                              -> meta (groups/group_codec.h)
//   'm' | group | 0x00 | user                -> member row (role, intervals)
//   'o' | group | 0x00 | be64(offset)        -> op outcome
//   'u' | user  | 0x00 | group               -> (empty): the user's current groups
//
// Names hold no 0x00, so a group's rows are one contiguous key range and load() is one meta read and
// two range scans. apply() writes a change in one synced batch, so fanout's Outbox commit never runs
// ahead of the membership it applied.

#include <rocksdb/db.h>

#include <memory>
#include <string>

#include "groups/group_store.h"

namespace qim {

class RocksGroupStore final : public GroupStore {
 public:
  // Opens (creating if missing) the store in `dir`. Io if it cannot be opened or another process holds it.
  static Result<std::unique_ptr<RocksGroupStore>> open(const std::string& dir);

  Status apply(const GroupChange& change) override;
  Result<std::optional<GroupState>> load(const GroupId& group) override;
  Result<std::optional<GroupMeta>> meta(const GroupId& group) override;
  Result<std::optional<GroupMemberRecord>> member(const GroupId& group, const UserId& user) override;
  Result<std::optional<GroupOpOutcome>> outcome(const GroupId& group, uint64_t offset) override;
  Result<std::vector<GroupId>> groups_of(const UserId& user) override;
  OpCounts op_counts() const override { return counters_.snapshot(); }

  // Test-only: the raw RocksDB, so the contract suite can plant a row that does not decode.
  rocksdb::DB& raw_db() { return *db_; }

 private:
  explicit RocksGroupStore(std::unique_ptr<rocksdb::DB> db) : db_(std::move(db)) {}
  Result<std::optional<std::string>> get(const std::string& key, std::string_view what);

  std::unique_ptr<rocksdb::DB> db_;
  OpCounters counters_;
};

}  // namespace qim
