#include "inbox/embedded/rocks_inbox.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <shared_mutex>

#include "core/big_endian.h"
#include "inbox/embedded/inbox_rows.h"
#include "inbox/embedded/rocks_inbox_move.h"
#include "inbox/entry_ref.h"
#include "mailbox/embedded/embedded_backend.h"
#include "mailbox/embedded/rocks_error.h"
#include "mailbox/embedded/side_rows.h"

namespace qim {

namespace {

using embedded::rocks_status;

std::string_view view(const rocksdb::Slice& s) {
  return {s.data(), s.size()};
}

using embedded::SideFamily;

Error not_attached() {
  return Error(
      Errc::kConfig,
      "embedded inbox: not attached to an embedded mailbox store (open the store with it as its sink)");
}

class RocksInbox final : public InboxBackend, public embedded::SideRows {
 public:
  RocksInbox(BackendContext context, std::string legacy_dir)
      : context_(std::move(context)), legacy_dir_(std::move(legacy_dir)) {}

  ~RocksInbox() override = default;  // the mailbox store detaches it first (it outlives the store)

  // (SideRows) The rows of an inbox database of decision 69 move in first (rocks_inbox_move.h).
  Status attach(const embedded::SideDb& db) override {
    QIM_RETURN_IF_ERROR(move_legacy_inbox(legacy_dir_, db));
    QIM_RETURN_IF_ERROR(build_activity(db));
    std::unique_lock lock(mu_);
    side_ = db;
    return {};
  }

  void detach() override {
    std::unique_lock lock(mu_);  // waits for the reads and writes under way
    side_.reset();
  }

  std::string_view name() const override { return "embedded"; }

  // (EntrySink) One batch per call into the mailbox's database, not synced: ContractStore calls this
  // before write_chunks answers, so before the frontier write whose log sync makes it durable with the
  // entries (docs/adr/0088). The rows go in key order, a (user, conversation)'s one after another, so
  // each searches the memtable from where the one before it went (the families' insert hints,
  // side_rows.h).
  Status entries_written(ShardId, Epoch, std::span<const MailboxEntry> entries) override {
    if (entries.empty()) return {};
    std::shared_lock lock(mu_);
    if (!side_) return not_attached();
    const int64_t expires = context_.clock->now_ms() + context_.entry_ttl_ms();
    std::vector<std::string> values;  // entry i's ref, for its index row and its conversation row
    std::vector<std::pair<std::string, size_t>> index_rows, rows;
    values.reserve(entries.size());
    index_rows.reserve(entries.size());
    rows.reserve(entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      const MailboxEntry& e = entries[i];
      values.push_back(inbox_rows::ref_value(inbox_ref_of(e), expires));
      index_rows.emplace_back(inbox_rows::index_key(e.user, e.message.conversation, e.seq), i);
      rows.emplace_back(inbox_rows::pair_prefix(e.user.str(), e.message.conversation.str()), i);
    }
    const auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
    std::stable_sort(index_rows.begin(), index_rows.end(), by_key);
    std::stable_sort(rows.begin(), rows.end(), by_key);
    rocksdb::WriteBatch batch;
    for (const auto& [key, i] : index_rows) {
      QIM_RETURN_IF_ERROR(
          rocks_status(batch.Put(side_->families[embedded::kInboxIndex], key, values[i]), "batch index row"));
    }
    // One merge per row: the merge keeps the highest (seq, expiry), so the batch's highest is all it needs.
    // And the activity position of that highest entry (docs/adr/0089), written blind in the same batch: one
    // lower than the row already held is stale at once, and readers skip and delete it; no read here.
    size_t distinct = 0;
    for (size_t r = 0; r < rows.size(); ++r) {
      size_t best = rows[r].second;
      for (; r + 1 < rows.size() && rows[r + 1].first == rows[r].first; ++r) {
        if (values[rows[r + 1].second].compare(0, 16, values[best], 0, 16) > 0) best = rows[r + 1].second;
      }
      const MailboxEntry& e = entries[best];
      QIM_RETURN_IF_ERROR(rocks_status(
          batch.Merge(side_->families[embedded::kInboxRows], rows[r].first, values[best]), "batch row"));
      QIM_RETURN_IF_ERROR(rocks_status(
          batch.Put(side_->families[embedded::kInboxActivity],
                    inbox_rows::activity_key(e.user, e.seq, e.message.conversation), values[best]),
          "batch activity position"));
      ++distinct;
    }
    counters_.inserts += index_rows.size() + 2 * distinct;
    return write_unsynced(batch, "inbox entries");
  }

  Result<std::vector<ConversationRow>> conversation_rows(const UserId& user) override {
    counters_.reads++;
    std::shared_lock lock(mu_);
    if (!side_) return not_attached();
    std::string prefix;
    inbox_rows::put_name(prefix, user.str());
    std::vector<ConversationRow> out;
    const int64_t now = context_.clock->now_ms();
    auto it = iterate(embedded::kInboxRows, prefix);
    for (it->Seek(prefix); it->Valid(); it->Next()) {
      QIM_ASSIGN_OR_RETURN(int64_t expires, inbox_rows::ref_expiry(view(it->value())));
      if (expires <= now) continue;
      QIM_ASSIGN_OR_RETURN(std::string c, inbox_rows::second_name(view(it->key())));
      QIM_ASSIGN_OR_RETURN(InboxEntryRef ref, inbox_rows::decode_ref(view(it->value())));
      out.push_back(ConversationRow{ConversationId::unchecked(std::move(c)), std::move(ref)});
    }
    QIM_RETURN_IF_ERROR(rocks_status(it->status(), "read conversation rows"));
    return out;
  }

  Result<std::vector<ActivityPosition>> activity_desc(const UserId& user, MailboxSeq after, MailboxSeq before,
                                                      uint32_t limit) override {
    counters_.reads++;
    std::shared_lock lock(mu_);
    if (!side_) return not_attached();
    std::vector<ActivityPosition> out;
    if (before <= after || limit == 0) return out;
    std::string prefix;
    inbox_rows::put_name(prefix, user.str());
    std::string start = prefix;
    put_be64(start, before.raw());  // every key of a lower seq sorts below it (a conversation follows)
    const int64_t now = context_.clock->now_ms();
    auto it = iterate(embedded::kInboxActivity, prefix);
    for (it->SeekForPrev(start); it->Valid() && out.size() < limit; it->Prev()) {
      QIM_ASSIGN_OR_RETURN(ActivityPosition p, inbox_rows::activity_position(view(it->key()), prefix.size()));
      if (p.seq >= before) continue;
      if (p.seq <= after) break;
      QIM_ASSIGN_OR_RETURN(int64_t expires, inbox_rows::ref_expiry(view(it->value())));
      if (expires <= now) continue;  // gone by TTL, as its row is
      out.push_back(std::move(p));
    }
    QIM_RETURN_IF_ERROR(rocks_status(it->status(), "read activity"));
    return out;
  }

  Result<std::vector<std::optional<InboxEntryRef>>> rows_of(
      const UserId& user, std::span<const ConversationId> conversations) override {
    counters_.reads++;
    std::shared_lock lock(mu_);
    if (!side_) return not_attached();
    std::vector<std::optional<InboxEntryRef>> out;
    const int64_t now = context_.clock->now_ms();
    std::string value;
    for (const ConversationId& c : conversations) {
      rocksdb::Status s = side_->db->Get(rocksdb::ReadOptions(), side_->families[embedded::kInboxRows],
                                         inbox_rows::pair_prefix(user.str(), c.str()), &value);
      out.emplace_back();
      if (s.IsNotFound()) continue;
      QIM_RETURN_IF_ERROR(rocks_status(s, "read conversation row"));
      QIM_ASSIGN_OR_RETURN(int64_t expires, inbox_rows::ref_expiry(value));
      if (expires <= now) continue;
      QIM_ASSIGN_OR_RETURN(InboxEntryRef ref, inbox_rows::decode_ref(value));
      out.back() = std::move(ref);
    }
    return out;
  }

  Result<std::vector<MailboxSeq>> read_marks_of(const UserId& user,
                                                std::span<const ConversationId> conversations) override {
    counters_.reads++;
    std::shared_lock lock(mu_);
    if (!side_) return not_attached();
    std::vector<MailboxSeq> out;
    std::string value;
    for (const ConversationId& c : conversations) {
      rocksdb::Status s = side_->db->Get(rocksdb::ReadOptions(), side_->families[embedded::kInboxMarks],
                                         inbox_rows::pair_prefix(user.str(), c.str()), &value);
      out.emplace_back();
      if (s.IsNotFound()) continue;
      QIM_RETURN_IF_ERROR(rocks_status(s, "read mark"));
      QIM_ASSIGN_OR_RETURN(uint64_t seq, inbox_rows::max16_first(value, "read mark"));
      out.back() = MailboxSeq::from_raw(seq);
    }
    return out;
  }

  // Blind deletes, not synced: a position lost to a crash is only skipped again.
  Status drop_stale_activity(const UserId& user, std::span<const ActivityPosition> stale) override {
    if (stale.empty()) return {};
    counters_.updates += stale.size();  // deletes
    std::shared_lock lock(mu_);
    if (!side_) return not_attached();
    rocksdb::WriteBatch batch;
    for (const ActivityPosition& p : stale) {
      QIM_RETURN_IF_ERROR(rocks_status(batch.Delete(side_->families[embedded::kInboxActivity],
                                                    inbox_rows::activity_key(user, p.seq, p.conversation)),
                                       "batch stale position"));
    }
    return write_unsynced(batch, "stale positions");
  }

  Result<std::vector<InboxEntryRef>> index_rows_desc(const UserId& user, const ConversationId& c,
                                                     MailboxSeq after, MailboxSeq upto,
                                                     uint32_t limit) override {
    counters_.reads++;
    std::shared_lock lock(mu_);
    if (!side_) return not_attached();
    std::vector<InboxEntryRef> out;
    if (upto <= after || limit == 0) return out;
    const std::string prefix = inbox_rows::pair_prefix(user.str(), c.str());
    const int64_t now = context_.clock->now_ms();
    auto it = iterate(embedded::kInboxIndex, prefix);
    for (it->SeekForPrev(inbox_rows::index_key(user, c, upto)); it->Valid() && out.size() < limit;
         it->Prev()) {
      QIM_ASSIGN_OR_RETURN(MailboxSeq seq, inbox_rows::index_key_seq(view(it->key()), prefix.size()));
      if (seq <= after) break;
      QIM_ASSIGN_OR_RETURN(int64_t expires, inbox_rows::ref_expiry(view(it->value())));
      if (expires <= now) continue;  // gone by TTL, as the entry is
      QIM_ASSIGN_OR_RETURN(InboxEntryRef ref, inbox_rows::decode_ref(view(it->value())));
      out.push_back(std::move(ref));
    }
    QIM_RETURN_IF_ERROR(rocks_status(it->status(), "read index rows"));
    return out;
  }

  Result<uint32_t> count_unread(const UserId& user, const ConversationId& c, MailboxSeq after,
                                MailboxSeq upto, uint32_t cap) override {
    counters_.reads++;
    std::shared_lock lock(mu_);
    if (!side_) return not_attached();
    uint32_t n = 0;
    if (upto <= after || cap == 0) return n;
    const std::string prefix = inbox_rows::pair_prefix(user.str(), c.str());
    const int64_t now = context_.clock->now_ms();
    auto it = iterate(embedded::kInboxIndex, prefix);
    for (it->Seek(inbox_rows::index_key(user, c, MailboxSeq::from_raw(after.raw() + 1)));
         it->Valid() && n < cap; it->Next()) {
      QIM_ASSIGN_OR_RETURN(MailboxSeq seq, inbox_rows::index_key_seq(view(it->key()), prefix.size()));
      if (seq > upto) break;
      QIM_ASSIGN_OR_RETURN(bool counts, inbox_rows::ref_counts(view(it->value())));
      if (!counts) continue;
      QIM_ASSIGN_OR_RETURN(int64_t expires, inbox_rows::ref_expiry(view(it->value())));
      if (expires > now) ++n;
    }
    QIM_RETURN_IF_ERROR(rocks_status(it->status(), "count index rows"));
    return n;
  }

  Status raise_read_mark(const UserId& user, const ConversationId& c, MailboxSeq seq) override {
    counters_.updates++;
    std::shared_lock lock(mu_);
    if (!side_) return not_attached();
    rocksdb::WriteBatch batch;
    QIM_RETURN_IF_ERROR(rocks_status(
        batch.Merge(side_->families[embedded::kInboxMarks], inbox_rows::pair_prefix(user.str(), c.str()),
                    inbox_rows::max16_value(seq.raw())),
        "batch read mark"));
    return write(batch, "read mark");
  }

  Result<std::vector<ReadMark>> read_marks(const UserId& user) override {
    counters_.reads++;
    std::shared_lock lock(mu_);
    if (!side_) return not_attached();
    std::string prefix;
    inbox_rows::put_name(prefix, user.str());
    std::vector<ReadMark> out;
    auto it = iterate(embedded::kInboxMarks, prefix);
    for (it->Seek(prefix); it->Valid(); it->Next()) {
      QIM_ASSIGN_OR_RETURN(std::string c, inbox_rows::second_name(view(it->key())));
      QIM_ASSIGN_OR_RETURN(uint64_t seq, inbox_rows::max16_first(view(it->value()), "read mark"));
      out.push_back(ReadMark{ConversationId::unchecked(std::move(c)), MailboxSeq::from_raw(seq)});
    }
    QIM_RETURN_IF_ERROR(rocks_status(it->status(), "read marks"));
    return out;
  }

  Result<MailboxSeq> read_mark(const UserId& user, const ConversationId& c) override {
    counters_.reads++;
    std::shared_lock lock(mu_);
    if (!side_) return not_attached();
    std::string value;
    rocksdb::Status s = side_->db->Get(rocksdb::ReadOptions(), side_->families[embedded::kInboxMarks],
                                       inbox_rows::pair_prefix(user.str(), c.str()), &value);
    if (s.IsNotFound()) return MailboxSeq{};
    QIM_RETURN_IF_ERROR(rocks_status(s, "read mark"));
    QIM_ASSIGN_OR_RETURN(uint64_t seq, inbox_rows::max16_first(value, "read mark"));
    return MailboxSeq::from_raw(seq);
  }

  Status raise_receipt(const ConversationId& c, const UserId& user, MessageId read_through) override {
    counters_.updates++;
    std::shared_lock lock(mu_);
    if (!side_) return not_attached();
    rocksdb::WriteBatch batch;
    QIM_RETURN_IF_ERROR(rocks_status(
        batch.Merge(side_->families[embedded::kInboxReceipts], inbox_rows::pair_prefix(c.str(), user.str()),
                    inbox_rows::max16_value(read_through.value)),
        "batch receipt"));
    return write(batch, "receipt");
  }

  Result<std::vector<ReceiptMark>> receipts(const ConversationId& c, uint32_t limit) override {
    counters_.reads++;
    std::shared_lock lock(mu_);
    if (!side_) return not_attached();
    std::string prefix;
    inbox_rows::put_name(prefix, c.str());
    std::vector<ReceiptMark> out;
    auto it = iterate(embedded::kInboxReceipts, prefix);
    for (it->Seek(prefix); it->Valid() && out.size() < limit; it->Next()) {
      QIM_ASSIGN_OR_RETURN(std::string user, inbox_rows::second_name(view(it->key())));
      QIM_ASSIGN_OR_RETURN(uint64_t id, inbox_rows::max16_first(view(it->value()), "receipt"));
      out.push_back(ReceiptMark{UserId::unchecked(std::move(user)), MessageId{id}});
    }
    QIM_RETURN_IF_ERROR(rocks_status(it->status(), "read receipts"));
    return out;
  }

  Status put_setting(const UserId& user, const std::string& key, const std::string& value,
                     int64_t version) override {
    if (version < 0) return Error(Errc::kInvalidArgument, "setting version must not be negative");
    counters_.updates++;
    std::shared_lock lock(mu_);
    if (!side_) return not_attached();
    std::string k;
    inbox_rows::put_name(k, user.str());
    k += key;
    rocksdb::WriteBatch batch;
    QIM_RETURN_IF_ERROR(
        rocks_status(batch.Merge(side_->families[embedded::kInboxSettings], k,
                                 inbox_rows::max16_value(static_cast<uint64_t>(version), value)),
                     "batch setting"));
    return write(batch, "setting");
  }

  Result<std::map<std::string, std::string>> settings(const UserId& user) override {
    counters_.reads++;
    std::shared_lock lock(mu_);
    if (!side_) return not_attached();
    std::string prefix;
    inbox_rows::put_name(prefix, user.str());
    std::map<std::string, std::string> out;
    auto it = iterate(embedded::kInboxSettings, prefix);
    for (it->Seek(prefix); it->Valid(); it->Next()) {
      QIM_ASSIGN_OR_RETURN(std::string key, inbox_rows::after_first_name(view(it->key())));
      const std::string_view value = view(it->value());
      QIM_RETURN_IF_ERROR(inbox_rows::max16_first(value, "setting"));
      out[key] = std::string(value.substr(16));
    }
    QIM_RETURN_IF_ERROR(rocks_status(it->status(), "read settings"));
    return out;
  }

  OpCounters& counters() override { return counters_; }

 private:
  // A database whose rows predate the activity index (or whose old inbox just moved in) gets one position
  // per row, once: when the activity family is empty and the rows family is not. One synced batch, so a
  // crash leaves either every position or none (and the next open builds them again).
  static Status build_activity(const embedded::SideDb& db) {
    std::unique_ptr<rocksdb::Iterator> any(
        db.db->NewIterator(rocksdb::ReadOptions(), db.families[embedded::kInboxActivity]));
    any->SeekToFirst();
    if (any->Valid()) return {};
    QIM_RETURN_IF_ERROR(rocks_status(any->status(), "read activity"));
    std::unique_ptr<rocksdb::Iterator> rows(
        db.db->NewIterator(rocksdb::ReadOptions(), db.families[embedded::kInboxRows]));
    rocksdb::WriteBatch batch;
    for (rows->SeekToFirst(); rows->Valid(); rows->Next()) {
      const std::string_view key = view(rows->key());
      QIM_ASSIGN_OR_RETURN(std::string c, inbox_rows::second_name(key));  // checks the user's name too
      QIM_ASSIGN_OR_RETURN(InboxEntryRef ref, inbox_rows::decode_ref(view(rows->value())));
      const size_t user_len = static_cast<uint8_t>(key[0]);
      const UserId user = UserId::unchecked(std::string(key.substr(1, user_len)));
      QIM_RETURN_IF_ERROR(rocks_status(
          batch.Put(db.families[embedded::kInboxActivity],
                    inbox_rows::activity_key(user, ref.seq, ConversationId::unchecked(std::move(c))),
                    std::string(view(rows->value()))),
          "batch activity position"));
    }
    QIM_RETURN_IF_ERROR(rocks_status(rows->status(), "read conversation rows"));
    if (batch.Count() == 0) return {};
    if (rocksdb::Status ready = db.gate->ready(); !ready.ok()) return rocks_status(ready, "build activity");
    rocksdb::WriteOptions synced;
    synced.sync = true;
    return rocks_status(db.db->Write(synced, &batch), "build activity");
  }

  // An iterator over the keys of `family` starting with `prefix`: both bounds live in the object, which
  // never moves (returned by guaranteed elision), so the slices RocksDB keeps pointers to stay valid.
  class Cursor {
   public:
    Cursor(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* family, const std::string& prefix)
        : lower_(prefix), upper_(prefix) {
      // The prefix's successor bounds it above; names are length-prefixed, so a prefix of only 0xff
      // bytes cannot occur, but an empty successor simply leaves the upper side unbounded.
      while (!upper_.empty() && static_cast<uint8_t>(upper_.back()) == 0xff) upper_.pop_back();
      if (!upper_.empty()) upper_.back() = static_cast<char>(static_cast<uint8_t>(upper_.back()) + 1);
      lower_slice_ = rocksdb::Slice(lower_);
      upper_slice_ = rocksdb::Slice(upper_);
      rocksdb::ReadOptions options;
      options.iterate_lower_bound = &lower_slice_;  // keeps Prev inside the prefix
      if (!upper_.empty()) options.iterate_upper_bound = &upper_slice_;
      it_.reset(db.NewIterator(options, family));
    }
    Cursor(const Cursor&) = delete;
    Cursor& operator=(const Cursor&) = delete;
    rocksdb::Iterator* operator->() { return it_.get(); }

   private:
    std::string lower_, upper_;
    rocksdb::Slice lower_slice_, upper_slice_;
    std::unique_ptr<rocksdb::Iterator> it_;
  };
  // Caller holds mu_ (shared) with side_ set.
  Cursor iterate(SideFamily family, const std::string& prefix) {
    return Cursor(*side_->db, side_->families[family], prefix);
  }

  // Writes `batch` into the log, not synced. Caller holds mu_ (shared) with side_ set.
  Status write_unsynced(rocksdb::WriteBatch& batch, std::string_view what) {
    // Not attempted while a write error (a full disk) stops the database and it cannot be resumed yet.
    if (rocksdb::Status ready = side_->gate->ready(); !ready.ok())
      return rocks_status(ready, "write " + std::string(what));
    return rocks_status(side_->db->Write(rocksdb::WriteOptions(), &batch), "write " + std::string(what));
  }

  // write_unsynced, then waits until the mailbox database's log is synced through it (its group commit,
  // wal_sync.h, shared with the frontier writes): a read mark, receipt or setting is durable on return.
  Status write(rocksdb::WriteBatch& batch, std::string_view what) {
    QIM_RETURN_IF_ERROR(write_unsynced(batch, what));
    return side_->syncer->sync_published();
  }

  BackendContext context_;
  std::string legacy_dir_;
  std::shared_mutex mu_;  // shared by every use of side_, exclusive to attach and detach it
  std::optional<embedded::SideDb> side_;
  OpCounters counters_;
};

}  // namespace

Result<std::unique_ptr<InboxBackend>> open_rocks_inbox(const BackendContext& context,
                                                       const std::string& legacy_dir) {
  return std::unique_ptr<InboxBackend>(std::make_unique<RocksInbox>(context, legacy_dir));
}

Status attach_rocks_inbox(InboxBackend& inbox, StoreBackend& mailbox) {
  auto* side = dynamic_cast<embedded::SideRows*>(&inbox);
  if (side == nullptr) return Error(Errc::kInvalidArgument, "not an embedded inbox");
  return embedded_backend_attach(mailbox, *side);
}

}  // namespace qim
