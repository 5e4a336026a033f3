#include "mailbox/memory/memory_backend.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "mailbox/message_codec.h"

namespace qim {

namespace {

class MemoryBackend final : public StoreBackend {
 public:
  explicit MemoryBackend(BackendContext context) : context_(std::move(context)) {}

  std::string_view name() const override { return "memory"; }
  uint32_t declared_page_limit() const override { return 64; }

  Result<std::optional<StoredIdentity>> claim_identity(ShardId shard, Epoch epoch,
                                                       const DispatchIdentity& identity,
                                                       Offset observed) override {
    std::lock_guard lock(mu_);
    counters_.reads++;
    auto key = std::make_tuple(shard.value, epoch.value, identity.id.str());
    if (auto it = identities_.find(key); it != identities_.end()) return std::optional(it->second);
    counters_.inserts++;
    identities_.emplace(key, StoredIdentity{identity, observed});
    return std::optional<StoredIdentity>();
  }

  Result<std::optional<StoredIdentity>> read_identity(ShardId shard, Epoch epoch,
                                                      const DispatchId& id) override {
    std::lock_guard lock(mu_);
    counters_.reads++;
    auto it = identities_.find(std::make_tuple(shard.value, epoch.value, id.str()));
    if (it == identities_.end()) return std::optional<StoredIdentity>();
    return std::optional(it->second);
  }

  Status write_entries(ShardId, Epoch epoch, std::span<const MailboxEntry> entries) override {
    std::lock_guard lock(mu_);
    const int64_t expires = context_.clock->now_ms() + context_.entry_ttl_ms();
    for (const auto& e : entries) {
      counters_.inserts += 2;  // the entry and its bucket proof
      mailboxes_[e.user.str()][e.seq.raw()] = Stored{e, expires};
      const DayBucket b = day_bucket_of(e.message.server_time_ms);
      auto& proof = proofs_[{e.user.str(), b.value}][epoch.value];
      proof = std::max(proof, e.seq.raw());
      auto& ledger = ledgers_[e.user.str()];
      if (!std::binary_search(ledger.live_buckets.begin(), ledger.live_buckets.end(), b)) {
        counters_.updates++;
        ledger.live_buckets.insert(
            std::upper_bound(ledger.live_buckets.begin(), ledger.live_buckets.end(), b), b);
        if (ledger_users_[context_.shards.shard_of(e.user).value].insert(e.user.str()).second) {
          counters_.inserts++;
        }
      }
    }
    return {};
  }

  Status redact_entries(std::span<const EntryKey> entries) override {
    return redact_edit_entries(entries, [](std::string_view, std::string_view body) {
      return body.empty() ? std::nullopt : std::optional<std::string>(std::in_place);
    });
  }

  Status redact_edit_entries(std::span<const EntryKey> entries, const EntryBodyRedaction& redact) override {
    std::lock_guard lock(mu_);
    for (const auto& k : entries) {
      auto user = mailboxes_.find(k.user.str());
      if (user == mailboxes_.end()) continue;
      auto it = user->second.find(k.seq.raw());
      if (it == user->second.end()) continue;
      Message& m = it->second.entry.message;
      std::optional<std::string> body = redact(m.client_msg_id, m.body);
      if (!body) continue;
      counters_.updates++;
      m.body = *std::move(body);
    }
    return {};
  }

  Result<std::optional<MailboxSeq>> read_frontier(ShardId shard) override {
    std::lock_guard lock(mu_);
    counters_.reads++;
    auto it = frontiers_.find(shard.value);
    if (it == frontiers_.end() || it->second.empty()) return std::optional<MailboxSeq>();
    const auto& [epoch, offset] = *it->second.rbegin();
    return std::optional(*compose(Epoch{epoch}, Offset{offset}));
  }

  Result<std::vector<MailboxSeq>> read_frontiers(ShardId shard) override {
    std::lock_guard lock(mu_);
    counters_.reads++;
    std::vector<MailboxSeq> out;
    if (auto it = frontiers_.find(shard.value); it != frontiers_.end()) {
      for (const auto& [epoch, offset] : it->second) out.push_back(*compose(Epoch{epoch}, Offset{offset}));
    }
    return out;
  }

  Status write_frontier(ShardId shard, Epoch epoch, MailboxSeq, MailboxSeq next) override {
    std::lock_guard lock(mu_);
    counters_.updates++;
    auto& offset = frontiers_[shard.value][epoch.value];
    offset = std::max(offset, next.offset().value);  // last-write-wins by offset timestamp
    return {};
  }

  Result<std::vector<MailboxEntry>> read_entries(const UserId& user, MailboxSeq after, MailboxSeq upto,
                                                 uint32_t limit) override {
    std::lock_guard lock(mu_);
    counters_.reads++;
    std::vector<MailboxEntry> out;
    auto it = mailboxes_.find(user.str());
    if (it == mailboxes_.end()) return out;
    const int64_t now = context_.clock->now_ms();
    for (auto e = it->second.upper_bound(after.raw()); e != it->second.end() && out.size() < limit; ++e) {
      if (e->first > upto.raw()) break;
      if (e->second.expires_ms > now) out.push_back(e->second.entry);
    }
    return out;
  }

  Result<RetentionLedger> read_ledger(const UserId& user) override {
    std::lock_guard lock(mu_);
    counters_.reads++;
    auto it = ledgers_.find(user.str());
    return it == ledgers_.end() ? RetentionLedger{} : it->second;
  }

  Result<std::optional<MailboxSeq>> read_bucket_proof(const UserId& user, DayBucket bucket) override {
    std::lock_guard lock(mu_);
    counters_.reads++;
    auto it = proofs_.find({user.str(), bucket.value});
    if (it == proofs_.end() || it->second.empty()) return std::optional<MailboxSeq>();
    uint64_t best = 0;
    for (const auto& [epoch, seq] : it->second) best = std::max(best, seq);
    return std::optional(MailboxSeq::from_raw(best));
  }

  Status commit_sweep(const UserId& user, const RetentionLedger& seen, MailboxSeq new_trim,
                      std::span<const DayBucket> expired) override {
    std::lock_guard lock(mu_);
    counters_.lwts++;
    auto& ledger = ledgers_[user.str()];
    if (ledger.trim != seen.trim || ledger.live_buckets != seen.live_buckets) {
      return Error(Errc::kInvariant, "retention ledger of " + user.str() + " changed during the sweep");
    }
    ledger.trim = std::max(ledger.trim, new_trim);
    std::erase_if(ledger.live_buckets,
                  [&](DayBucket b) { return std::find(expired.begin(), expired.end(), b) != expired.end(); });
    return {};
  }

  Result<std::vector<UserId>> list_ledger_users(ShardId shard, const std::string& after,
                                                uint32_t limit) override {
    std::lock_guard lock(mu_);
    counters_.reads++;
    std::vector<UserId> out;
    auto it = ledger_users_.find(shard.value);
    if (it == ledger_users_.end()) return out;
    for (auto u = it->second.upper_bound(after); u != it->second.end() && out.size() < limit; ++u) {
      out.push_back(UserId::unchecked(*u));
    }
    return out;
  }

  Result<uint64_t> gc_completed_dispatches() override { return uint64_t{0}; }
  OpCounters& counters() override { return counters_; }

  // Test hook: whether any stored entry holds `bytes` (memory_backend_holds).
  bool holds(std::string_view bytes) {
    std::lock_guard lock(mu_);
    for (const auto& [user, entries] : mailboxes_) {
      for (const auto& [seq, stored] : entries) {
        if (encode_message(stored.entry.message).find(bytes) != std::string::npos) return true;
      }
    }
    return false;
  }

  // Test hook: removes a proof row, to check that a missing proof fails closed.
  void drop_proof(const UserId& user, DayBucket bucket) {
    std::lock_guard lock(mu_);
    proofs_.erase({user.str(), bucket.value});
  }

 private:
  struct Stored {
    MailboxEntry entry;
    int64_t expires_ms;
  };

  BackendContext context_;
  OpCounters counters_;
  std::mutex mu_;
  std::map<std::tuple<uint32_t, uint32_t, std::string>, StoredIdentity> identities_;
  std::map<uint32_t, std::map<uint32_t, uint64_t>> frontiers_;  // shard -> epoch -> offset
  std::map<std::string, std::map<uint64_t, Stored>> mailboxes_;
  std::map<std::pair<std::string, int64_t>, std::map<uint32_t, uint64_t>>
      proofs_;  // (user, day) -> epoch -> seq
  std::map<std::string, RetentionLedger> ledgers_;
  std::map<uint32_t, std::set<std::string>> ledger_users_;  // shard -> users with a ledger
};

}  // namespace

std::unique_ptr<StoreBackend> make_memory_backend(const BackendContext& context) {
  return std::make_unique<MemoryBackend>(context);
}

Status memory_backend_drop_proof(StoreBackend& backend, const UserId& user, DayBucket bucket) {
  auto* memory = dynamic_cast<MemoryBackend*>(&backend);
  if (memory == nullptr) return Error(Errc::kInvalidArgument, "not a memory backend");
  memory->drop_proof(user, bucket);
  return {};
}

Result<bool> memory_backend_holds(StoreBackend& backend, std::string_view bytes) {
  auto* memory = dynamic_cast<MemoryBackend*>(&backend);
  if (memory == nullptr) return Error(Errc::kInvalidArgument, "not a memory backend");
  return memory->holds(bytes);
}

}  // namespace qim
