// The user registry's cells (user_registry.h): in memory (tests) and in RocksDB (the embedded deployment,
// QIM_DATA_DIR/users); the routing Redis's are in redis/. A value starts with its version byte and its stamp
// (encode_user_record), which is what put() compares: the cell is replaced only by a later stamp.
#include <rocksdb/db.h>

#include <map>
#include <mutex>

#include "core/big_endian.h"
#include "mailbox/embedded/rocks_info_log.h"
#include "users/user_registry.h"

namespace qim {

namespace {

int64_t stamp_of(const std::string& value) {
  return value.size() >= 9 ? static_cast<int64_t>(get_be64(std::string_view(value).substr(1))) : INT64_MIN;
}

class MemoryUserCells final : public UserCells {
 public:
  Result<bool> put(const std::string& key, int64_t stamp, const std::string& value) override {
    std::lock_guard lock(mu_);
    auto it = cells_.find(key);
    if (it != cells_.end() && stamp_of(it->second.second) >= stamp) return false;
    cells_[key] = {++seq_, value};
    return true;
  }
  Result<UserCellChanges> changed_since(int64_t cursor) override {
    std::lock_guard lock(mu_);
    UserCellChanges out;
    out.everything = cursor <= 0 || cursor > seq_;
    out.cursor = seq_;
    for (const auto& [k, v] : cells_)
      if (out.everything || v.first > cursor) out.values.push_back(v.second);
    return out;
  }

 private:
  std::mutex mu_;
  int64_t seq_ = 0;                                               // writes so far
  std::map<std::string, std::pair<int64_t, std::string>> cells_;  // key -> (seq of its write, value)
};

class SharedUserCells final : public UserCells {
 public:
  explicit SharedUserCells(UserCells& cells) : cells_(cells) {}
  Result<bool> put(const std::string& key, int64_t stamp, const std::string& value) override {
    return cells_.put(key, stamp, value);
  }
  Result<UserCellChanges> changed_since(int64_t cursor) override { return cells_.changed_since(cursor); }

 private:
  UserCells& cells_;
};

Status rocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return {};
  return Error(s.IsCorruption() ? Errc::kCorruptEntry : Errc::kIo,
               "user registry: " + std::string(what) + ": " + s.ToString());
}

class RocksUserCells final : public UserCells {
 public:
  explicit RocksUserCells(std::unique_ptr<rocksdb::DB> db) : db_(std::move(db)) {}

  Result<bool> put(const std::string& key, int64_t stamp, const std::string& value) override {
    std::lock_guard lock(
        mu_);  // one process writes this directory: the read-compare-write races nothing else
    std::string old;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), key, &old);
    if (!s.IsNotFound()) {
      QIM_RETURN_IF_ERROR(rocks(s, "read " + key));
      if (stamp_of(old) >= stamp) return false;
    }
    rocksdb::WriteOptions sync;
    sync.sync = true;
    QIM_RETURN_IF_ERROR(rocks(db_->Put(sync, key, value), "write " + key));
    return true;
  }

  // One process writes the directory: after the first load (cursor 0) there is nothing to follow.
  Result<UserCellChanges> changed_since(int64_t cursor) override {
    UserCellChanges out;
    out.cursor = 1;
    if (cursor > 0) return out;
    out.everything = true;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    for (it->SeekToFirst(); it->Valid(); it->Next()) out.values.push_back(it->value().ToString());
    QIM_RETURN_IF_ERROR(rocks(it->status(), "scan"));
    return out;
  }

 private:
  std::mutex mu_;
  std::unique_ptr<rocksdb::DB> db_;
};

}  // namespace

std::unique_ptr<UserCells> make_memory_user_cells() {
  return std::make_unique<MemoryUserCells>();
}

std::unique_ptr<UserCells> share_user_cells(UserCells& cells) {
  return std::make_unique<SharedUserCells>(cells);
}

Result<std::unique_ptr<UserCells>> open_rocks_user_cells(const std::string& dir) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.info_log = embedded::rocks_info_log("user registry");
  rocksdb::DB* raw = nullptr;
  QIM_RETURN_IF_ERROR(rocks(rocksdb::DB::Open(options, dir, &raw), "open " + dir));
  return std::unique_ptr<UserCells>(std::make_unique<RocksUserCells>(std::unique_ptr<rocksdb::DB>(raw)));
}

}  // namespace qim
