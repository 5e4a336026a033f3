#pragma once
// A StoreBackend that passes every primitive to another backend it does not own: the memory fixture's
// view of rows that outlive a "restart", and the base of test backends that count or change one call.

#include "mailbox/store_backend.h"

namespace qim::test {

class ForwardingBackend : public StoreBackend {
 public:
  // `target` must outlive this object.
  explicit ForwardingBackend(StoreBackend& target) : t_(target) {}

  std::string_view name() const override { return t_.name(); }
  uint32_t declared_page_limit() const override { return t_.declared_page_limit(); }
  Result<std::optional<StoredIdentity>> claim_identity(ShardId shard, Epoch epoch,
                                                       const DispatchIdentity& identity,
                                                       Offset observed) override {
    return t_.claim_identity(shard, epoch, identity, observed);
  }
  std::vector<ClaimAnswer> claim_identities(ShardId shard, Epoch epoch,
                                            std::span<const IdentityClaim> claims) override {
    return t_.claim_identities(shard, epoch, claims);
  }
  Result<std::optional<StoredIdentity>> read_identity(ShardId shard, Epoch epoch,
                                                      const DispatchId& id) override {
    return t_.read_identity(shard, epoch, id);
  }
  Status write_entries(ShardId shard, Epoch epoch, std::span<const MailboxEntry> entries) override {
    return t_.write_entries(shard, epoch, entries);
  }
  Status redact_entries(std::span<const EntryKey> entries) override { return t_.redact_entries(entries); }
  Status redact_edit_entries(std::span<const EntryKey> entries, const EntryBodyRedaction& redact) override {
    return t_.redact_edit_entries(entries, redact);
  }
  Result<std::optional<MailboxSeq>> read_frontier(ShardId shard) override { return t_.read_frontier(shard); }
  Result<std::vector<MailboxSeq>> read_frontiers(ShardId shard) override { return t_.read_frontiers(shard); }
  Status write_frontier(ShardId shard, Epoch epoch, MailboxSeq expected_previous, MailboxSeq next) override {
    return t_.write_frontier(shard, epoch, expected_previous, next);
  }
  Result<std::vector<MailboxEntry>> read_entries(const UserId& user, MailboxSeq after, MailboxSeq upto,
                                                 uint32_t limit) override {
    return t_.read_entries(user, after, upto, limit);
  }
  Result<RetentionLedger> read_ledger(const UserId& user) override { return t_.read_ledger(user); }
  Result<std::vector<std::vector<MailboxSeq>>> read_frontiers_of(std::span<const ShardId> shards) override {
    return t_.read_frontiers_of(shards);
  }
  Result<std::vector<RetentionLedger>> read_ledgers(std::span<const UserId> users) override {
    return t_.read_ledgers(users);
  }
  Result<std::optional<MailboxSeq>> read_bucket_proof(const UserId& user, DayBucket bucket) override {
    return t_.read_bucket_proof(user, bucket);
  }
  Status commit_sweep(const UserId& user, const RetentionLedger& seen, MailboxSeq new_trim,
                      std::span<const DayBucket> expired) override {
    return t_.commit_sweep(user, seen, new_trim, expired);
  }
  Result<std::vector<UserId>> list_ledger_users(ShardId shard, const std::string& after,
                                                uint32_t limit) override {
    return t_.list_ledger_users(shard, after, limit);
  }
  Result<uint64_t> gc_completed_dispatches() override { return t_.gc_completed_dispatches(); }
  OpCounters& counters() override { return t_.counters(); }

 private:
  StoreBackend& t_;
};

}  // namespace qim::test
