#include "mailbox/embedded/audit_reader.h"

#include <rocksdb/db.h>

#include <filesystem>

#include "mailbox/embedded/max_merge.h"
#include "mailbox/embedded/rocks_error.h"
#include "mailbox/embedded/rows.h"

namespace qim {

namespace {

using embedded::rocks_status;

uint32_t be32(std::string_view b) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(b[i]);
  return v;
}

class EmbeddedAuditReader : public AuditReader {
 public:
  enum Family { kIdentity = 1, kFrontier = 2, kEntries = 3 };

  EmbeddedAuditReader(std::shared_ptr<rocksdb::MergeOperator> merge, int64_t now_ms)
      : merge_(std::move(merge)), now_ms_(now_ms) {}
  ~EmbeddedAuditReader() override {
    for (auto* h : handles_)
      if (h != nullptr) db_->DestroyColumnFamilyHandle(h);
  }

  Status open(const std::string& dir) {
    rocksdb::ColumnFamilyOptions merged;
    merged.merge_operator = merge_;
    const std::vector<rocksdb::ColumnFamilyDescriptor> families = {
        {rocksdb::kDefaultColumnFamilyName, {}},          {std::string(embedded::kIdentityFamily), {}},
        {std::string(embedded::kFrontierFamily), merged}, {std::string(embedded::kEntriesFamily), {}},
        {std::string(embedded::kProofsFamily), merged},   {std::string(embedded::kLedgerFamily), {}},
        {std::string(embedded::kLedgerUsersFamily), {}},
    };
    rocksdb::DB* db = nullptr;
    QIM_RETURN_IF_ERROR(
        rocks_status(rocksdb::DB::OpenForReadOnly(rocksdb::DBOptions(), dir, families, &handles_, &db),
                     "open " + dir + " read-only"));
    db_.reset(db);
    return {};
  }

  std::string_view backend() const override { return "embedded"; }
  bool identity_conflicts_possible() const override { return false; }
  std::vector<std::string> notes() const override {
    return {
        "embedded: one process writes the store (RocksDB locks it), so no two owners can write one "
        "shard; the audit compares epochs, identity expiries and every entry against its dispatch",
        "embedded keeps no write timestamps: WRITETIME checks do not apply"};
  }

  Status frontiers(const std::vector<ShardId>&, RowPacer& pacer,
                   const std::function<Status(const AuditFrontierRow&)>& visit,
                   const CorruptSink& corrupt) override {
    return walk(kFrontier, "frontiers", pacer, [&](std::string_view key, std::string_view value) -> Status {
      auto seq = embedded::decode_frontier(key, value);
      if (!seq.ok()) {
        corrupt({"frontier row", seq.error().message()});
        return {};
      }
      return visit({ShardId{be32(key)}, seq->epoch(), seq->offset(), std::nullopt});
    });
  }

  Status identities(const std::vector<ShardId>&, RowPacer& pacer,
                    const std::function<Status(const AuditIdentityRow&)>& visit,
                    const CorruptSink& corrupt) override {
    return walk(kIdentity, "identities", pacer, [&](std::string_view key, std::string_view value) -> Status {
      if (key.size() <= 8) {
        corrupt({"identity row", "key of " + std::to_string(key.size()) + " bytes"});
        return {};
      }
      auto id = DispatchId::parse(key.substr(8));
      if (!id.ok()) {
        corrupt({"identity row", id.error().message()});
        return {};
      }
      auto row = embedded::decode_identity(*id, value);
      if (!row.ok()) {
        corrupt({"identity row " + id->str(), row.error().message()});
        return {};
      }
      if (row->expires_ms <= now_ms_) return {};  // expired: the garbage collector drops it
      const auto& s = row->stored;
      return visit({ShardId{be32(key)}, Epoch{be32(key.substr(4))}, *id, s.identity.digest,
                    s.identity.manifest, s.canonical_offset, std::nullopt,
                    (row->expires_ms - now_ms_ + 999) / 1000});
    });
  }

  Status entries(const std::vector<ShardId>&, RowPacer& pacer,
                 const std::function<Status(const AuditEntryRow&)>& visit,
                 const CorruptSink& corrupt) override {
    return walk(kEntries, "entries", pacer, [&](std::string_view key, std::string_view value) -> Status {
      const size_t n = key.empty() ? 0 : static_cast<uint8_t>(key[0]);
      auto user = key.size() > n ? UserId::parse(key.substr(1, n))
                                 : Result<UserId>(Error(Errc::kCorruptEntry, "short key"));
      if (!user.ok()) {
        corrupt({"entry row", user.error().message()});
        return {};
      }
      auto expiry = embedded::entry_expiry(value);
      if (expiry.ok() && *expiry <= now_ms_) return {};  // expired: not live, the compaction drops it
      auto seq = embedded::entry_seq(key, n + 1);
      auto message = embedded::entry_message(value);
      if (!seq.ok() || !message.ok()) {
        corrupt(
            {"entry row of " + user->str(), !seq.ok() ? seq.error().message() : message.error().message()});
        return {};
      }
      return visit({*user, *seq, message->id});
    });
  }

  Result<std::optional<AuditIdentityRow>> identity(ShardId shard, Epoch epoch,
                                                   const DispatchId& id) override {
    std::string value;
    const auto s = db_->Get(rocksdb::ReadOptions(), handles_[kIdentity],
                            embedded::identity_key(shard, epoch, id), &value);
    if (s.IsNotFound()) return std::optional<AuditIdentityRow>();
    QIM_RETURN_IF_ERROR(rocks_status(s, "read identity " + id.str()));
    QIM_ASSIGN_OR_RETURN(embedded::IdentityRow row, embedded::decode_identity(id, value));
    if (row.expires_ms <= now_ms_) return std::optional<AuditIdentityRow>();
    const auto& st = row.stored;
    return std::optional(AuditIdentityRow{shard, epoch, id, st.identity.digest, st.identity.manifest,
                                          st.canonical_offset, std::nullopt,
                                          (row.expires_ms - now_ms_ + 999) / 1000});
  }

 private:
  Status walk(Family family, std::string_view phase, RowPacer& pacer,
              const std::function<Status(std::string_view, std::string_view)>& each) {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[family]));
    const uint32_t page = pacer.page_size();
    uint32_t in_page = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      QIM_RETURN_IF_ERROR(each(std::string_view(it->key().data(), it->key().size()),
                               std::string_view(it->value().data(), it->value().size())));
      if (++in_page == page) {
        pacer.account(in_page, phase);
        in_page = 0;
      }
    }
    pacer.account(in_page, phase);
    return rocks_status(it->status(), "walk " + std::string(phase));
  }

  std::shared_ptr<rocksdb::MergeOperator> merge_;
  int64_t now_ms_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  std::unique_ptr<rocksdb::DB> db_;
};

}  // namespace

Result<std::unique_ptr<AuditReader>> open_embedded_audit_reader(const std::string& dir, int64_t now_ms) {
  if (!std::filesystem::exists(dir + "/CURRENT"))
    return Error(Errc::kNotFound, "no embedded mailbox store in " + dir + " (QIM_DATA_DIR / --data-dir)");
  auto reader = std::make_unique<EmbeddedAuditReader>(std::make_shared<embedded::MaxU64Merge>(), now_ms);
  QIM_RETURN_IF_ERROR(reader->open(dir));
  return std::unique_ptr<AuditReader>(std::move(reader));
}

}  // namespace qim
