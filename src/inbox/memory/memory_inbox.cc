#include "inbox/memory/memory_inbox.h"

#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "inbox/entry_ref.h"

namespace qim {

namespace {

struct Kept {
  InboxEntryRef ref;
  int64_t expires_ms = 0;
};

class MemoryInbox final : public InboxBackend {
 public:
  explicit MemoryInbox(BackendContext context) : context_(std::move(context)) {}

  std::string_view name() const override { return "memory"; }

  Status entries_written(ShardId, Epoch, std::span<const MailboxEntry> entries) override {
    std::lock_guard lock(mu_);
    const int64_t expires = context_.clock->now_ms() + context_.entry_ttl_ms();
    for (const MailboxEntry& e : entries) {
      Kept kept{inbox_ref_of(e), expires};
      counters_.inserts += 2;  // the index row and the row's max (with its activity position)
      index_[{e.user.str(), e.message.conversation.str()}][e.seq.raw()] = kept;
      // A monotonic max keyed by seq: an equal seq (a replay) refreshes the row, as the index's upsert
      // refreshes its entry; a lower one changes nothing. The row's position moves with it, exactly.
      auto& row = rows_[e.user.str()][e.message.conversation.str()];
      if (row.ref.seq <= e.seq) {
        auto& positions = activity_[e.user.str()];
        positions.erase({row.ref.seq.raw(), e.message.conversation.str()});
        positions.insert({e.seq.raw(), e.message.conversation.str()});
        row = std::move(kept);
      }
    }
    return {};
  }

  Result<std::vector<ConversationRow>> conversation_rows(const UserId& user) override {
    std::lock_guard lock(mu_);
    counters_.reads++;
    std::vector<ConversationRow> out;
    const int64_t now = context_.clock->now_ms();
    if (auto it = rows_.find(user.str()); it != rows_.end()) {
      for (const auto& [c, kept] : it->second) {
        if (kept.expires_ms > now) out.push_back(ConversationRow{ConversationId::unchecked(c), kept.ref});
      }
    }
    return out;
  }

  Result<std::vector<ActivityPosition>> activity_desc(const UserId& user, MailboxSeq after, MailboxSeq before,
                                                      uint32_t limit) override {
    std::lock_guard lock(mu_);
    counters_.reads++;
    std::vector<ActivityPosition> out;
    auto it = activity_.find(user.str());
    if (it == activity_.end() || before <= after) return out;
    const auto& positions = it->second;
    for (auto p = std::make_reverse_iterator(positions.lower_bound({before.raw(), std::string()}));
         p != positions.rend() && out.size() < limit; ++p) {
      if (p->first <= after.raw()) break;
      out.push_back(ActivityPosition{MailboxSeq::from_raw(p->first), ConversationId::unchecked(p->second)});
    }
    return out;
  }

  Result<std::vector<std::optional<InboxEntryRef>>> rows_of(
      const UserId& user, std::span<const ConversationId> conversations) override {
    std::lock_guard lock(mu_);
    counters_.reads++;
    std::vector<std::optional<InboxEntryRef>> out;
    const int64_t now = context_.clock->now_ms();
    auto it = rows_.find(user.str());
    for (const ConversationId& c : conversations) {
      std::optional<InboxEntryRef> row;
      if (it != rows_.end()) {
        if (auto r = it->second.find(c.str()); r != it->second.end() && r->second.expires_ms > now)
          row = r->second.ref;
      }
      out.push_back(std::move(row));
    }
    return out;
  }

  Result<std::vector<MailboxSeq>> read_marks_of(const UserId& user,
                                                std::span<const ConversationId> conversations) override {
    std::lock_guard lock(mu_);
    counters_.reads++;
    std::vector<MailboxSeq> out;
    auto it = marks_.find(user.str());
    for (const ConversationId& c : conversations) {
      MailboxSeq m;
      if (it != marks_.end()) {
        if (auto k = it->second.find(c.str()); k != it->second.end()) m = MailboxSeq::from_raw(k->second);
      }
      out.push_back(m);
    }
    return out;
  }

  Result<std::vector<InboxEntryRef>> index_rows_desc(const UserId& user, const ConversationId& c,
                                                     MailboxSeq after, MailboxSeq upto,
                                                     uint32_t limit) override {
    std::lock_guard lock(mu_);
    counters_.reads++;
    std::vector<InboxEntryRef> out;
    if (upto <= after || limit == 0) return out;
    auto it = index_.find({user.str(), c.str()});
    if (it == index_.end()) return out;
    const int64_t now = context_.clock->now_ms();
    const auto& rows = it->second;
    for (auto r = std::make_reverse_iterator(rows.upper_bound(upto.raw())); r != rows.rend(); ++r) {
      if (r->first <= after.raw() || out.size() >= limit) break;
      if (r->second.expires_ms > now) out.push_back(r->second.ref);
    }
    return out;
  }

  Result<uint32_t> count_unread(const UserId& user, const ConversationId& c, MailboxSeq after,
                                MailboxSeq upto, uint32_t cap) override {
    std::lock_guard lock(mu_);
    counters_.reads++;
    uint32_t n = 0;
    if (upto <= after) return n;
    auto it = index_.find({user.str(), c.str()});
    if (it == index_.end()) return n;
    const int64_t now = context_.clock->now_ms();
    for (auto r = it->second.upper_bound(after.raw()); r != it->second.end() && r->first <= upto.raw(); ++r) {
      if (n >= cap) break;
      if (r->second.ref.counts && r->second.expires_ms > now) ++n;
    }
    return n;
  }

  Status raise_read_mark(const UserId& user, const ConversationId& c, MailboxSeq seq) override {
    std::lock_guard lock(mu_);
    counters_.updates++;
    auto& mark = marks_[user.str()][c.str()];
    mark = std::max(mark, seq.raw());
    return {};
  }

  Result<std::vector<ReadMark>> read_marks(const UserId& user) override {
    std::lock_guard lock(mu_);
    counters_.reads++;
    std::vector<ReadMark> out;
    if (auto it = marks_.find(user.str()); it != marks_.end()) {
      for (const auto& [c, seq] : it->second)
        out.push_back(ReadMark{ConversationId::unchecked(c), MailboxSeq::from_raw(seq)});
    }
    return out;
  }

  Result<MailboxSeq> read_mark(const UserId& user, const ConversationId& c) override {
    std::lock_guard lock(mu_);
    counters_.reads++;
    auto it = marks_.find(user.str());
    if (it == marks_.end()) return MailboxSeq{};
    auto m = it->second.find(c.str());
    return m == it->second.end() ? MailboxSeq{} : MailboxSeq::from_raw(m->second);
  }

  Status raise_receipt(const ConversationId& c, const UserId& user, MessageId read_through) override {
    std::lock_guard lock(mu_);
    counters_.updates++;
    auto& kept = receipts_[c.str()][user.str()];
    kept = std::max(kept, read_through.value);
    return {};
  }

  Result<std::vector<ReceiptMark>> receipts(const ConversationId& c, uint32_t limit) override {
    std::lock_guard lock(mu_);
    counters_.reads++;
    std::vector<ReceiptMark> out;
    if (auto it = receipts_.find(c.str()); it != receipts_.end()) {
      for (const auto& [user, id] : it->second) {
        if (out.size() >= limit) break;
        out.push_back(ReceiptMark{UserId::unchecked(user), MessageId{id}});
      }
    }
    return out;
  }

  Status put_setting(const UserId& user, const std::string& key, const std::string& value,
                     int64_t version) override {
    std::lock_guard lock(mu_);
    counters_.updates++;
    auto [it, fresh] = settings_[user.str()].try_emplace(key, value, version);
    if (!fresh && it->second.second < version) it->second = {value, version};
    return {};
  }

  Result<std::map<std::string, std::string>> settings(const UserId& user) override {
    std::lock_guard lock(mu_);
    counters_.reads++;
    std::map<std::string, std::string> out;
    if (auto it = settings_.find(user.str()); it != settings_.end()) {
      for (const auto& [k, v] : it->second) out[k] = v.first;
    }
    return out;
  }

  OpCounters& counters() override { return counters_; }

 private:
  BackendContext context_;
  std::mutex mu_;
  std::map<std::pair<std::string, std::string>, std::map<uint64_t, Kept>> index_;  // (user, c) -> seq
  std::map<std::string, std::map<std::string, Kept>> rows_;                        // user -> c -> row
  std::map<std::string, std::set<std::pair<uint64_t, std::string>>> activity_;     // user -> (seq, c)
  std::map<std::string, std::map<std::string, uint64_t>> marks_;                   // user -> c -> seq
  std::map<std::string, std::map<std::string, uint64_t>> receipts_;                // c -> user -> id
  std::map<std::string, std::map<std::string, std::pair<std::string, int64_t>>> settings_;
  OpCounters counters_;
};

}  // namespace

std::unique_ptr<InboxBackend> make_memory_inbox(const BackendContext& context) {
  return std::make_unique<MemoryInbox>(context);
}

}  // namespace qim
