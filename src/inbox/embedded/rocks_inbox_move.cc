#include "inbox/embedded/rocks_inbox_move.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "mailbox/embedded/rocks_error.h"
#include "mailbox/embedded/rocks_info_log.h"

namespace qim {

namespace {

using embedded::rocks_status;

// Rows per write while copying: bounded memory for a large inbox.
constexpr size_t kRowsPerBatch = 4096;

Error io(const std::string& what, const std::string& dir, const std::error_code& ec) {
  return Error(Errc::kIo, "embedded inbox: cannot " + what + " " + dir + ": " + ec.message());
}

Status write(const embedded::SideDb& db, rocksdb::WriteBatch& batch) {
  if (batch.Count() == 0) return {};
  if (rocksdb::Status ready = db.gate->ready(); !ready.ok()) return rocks_status(ready, "move the old inbox");
  QIM_RETURN_IF_ERROR(rocks_status(db.db->Write(rocksdb::WriteOptions(), &batch), "move the old inbox"));
  batch.Clear();
  return {};
}

// Copies every row of the old database into the mailbox's families.
Status copy_rows(const std::string& dir, const embedded::SideDb& db) {
  std::vector<std::string> names;
  QIM_RETURN_IF_ERROR(rocks_status(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir, &names),
                                   "list old inbox " + dir));
  auto merge = std::make_shared<embedded::Max16Merge>();
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  std::vector<size_t> target;  // per opened family: its side family, or kSideFamilyCount for default
  for (const std::string& name : names) {
    rocksdb::ColumnFamilyOptions options;
    size_t side = embedded::kSideFamilyCount;
    for (size_t i = 0; i < embedded::kSideFamilyCount; ++i) {
      if (embedded::kSideFamilyNames[i] == name) side = i;
    }
    if (side == embedded::kSideFamilyCount && name != rocksdb::kDefaultColumnFamilyName) {
      return Error(Errc::kCorruptEntry, "embedded inbox: " + dir + " has a family '" + name +
                                            "' the old inbox never had: not moved, move it away");
    }
    const bool put = side == embedded::kInboxIndex || side == embedded::kInboxActivity;
    if (side != embedded::kSideFamilyCount && !put) options.merge_operator = merge;
    families.emplace_back(name, options);
    target.push_back(side);
  }
  rocksdb::DBOptions options;
  options.info_log = embedded::rocks_info_log("old inbox");
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  QIM_RETURN_IF_ERROR(
      rocks_status(rocksdb::DB::Open(options, dir, families, &handles, &raw), "open old inbox " + dir));
  std::unique_ptr<rocksdb::DB> old(raw);
  Status copied;
  rocksdb::WriteBatch batch;
  for (size_t f = 0; f < handles.size() && copied.ok(); ++f) {
    const size_t side = target[f];
    if (side == embedded::kSideFamilyCount) continue;
    std::unique_ptr<rocksdb::Iterator> it(old->NewIterator(rocksdb::ReadOptions(), handles[f]));
    for (it->SeekToFirst(); it->Valid() && copied.ok(); it->Next()) {
      rocksdb::ColumnFamilyHandle* to = db.families[side];
      // Index rows and positions are puts (one value per key); every other family a max merge, as written.
      const bool put = side == embedded::kInboxIndex || side == embedded::kInboxActivity;
      copied =
          rocks_status(put ? batch.Put(to, it->key(), it->value()) : batch.Merge(to, it->key(), it->value()),
                       "batch old inbox row");
      if (copied.ok() && batch.Count() >= kRowsPerBatch) copied = write(db, batch);
    }
    if (copied.ok()) copied = rocks_status(it->status(), "read old inbox " + dir);
  }
  if (copied.ok()) copied = write(db, batch);
  for (auto* h : handles) old->DestroyColumnFamilyHandle(h);
  old->Close().PermitUncheckedError();  // read only here
  return copied;
}

}  // namespace

Status move_legacy_inbox(const std::string& dir, const embedded::SideDb& db) {
  if (dir.empty()) return {};
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string moved = dir + ".moved";
  if (fs::exists(moved, ec)) {  // a finished move (copied and synced) whose removal a crash interrupted
    fs::remove_all(moved, ec);
    if (ec) return io("remove", moved, ec);
  }
  if (!fs::exists(dir, ec)) return {};
  if (fs::is_empty(dir, ec) && !ec) {  // created, never opened
    fs::remove(dir, ec);
    return ec ? Status(io("remove", dir, ec)) : Status();
  }
  QIM_RETURN_IF_ERROR(copy_rows(dir, db));
  // The copy must be durable before the old rows go: the mailbox's group commit syncs its log through it.
  QIM_RETURN_IF_ERROR(db.syncer->sync_published());
  fs::rename(dir, moved, ec);
  if (ec) return io("rename", dir, ec);
  fs::remove_all(moved, ec);
  if (ec) return io("remove", moved, ec);
  return {};
}

}  // namespace qim
