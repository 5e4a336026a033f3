// The memory backend under the contract suite. Its data lives in the backend object, so the harness
// keeps that object and hands each open() a view of it: a restart is then a new ContractStore (empty
// in-flight table and frontier cache) over the same stored rows, as it is for a backend on disk.
#include "mailbox/memory/memory_backend.h"
#include "mailbox/tests/backend_fixture.h"

namespace qim::test {

namespace {

// Forwards every primitive to a backend it does not own.
class BackendView final : public StoreBackend {
 public:
  explicit BackendView(StoreBackend& target) : t_(target) {}

  std::string_view name() const override { return t_.name(); }
  uint32_t declared_page_limit() const override { return t_.declared_page_limit(); }
  Result<std::optional<StoredIdentity>> claim_identity(ShardId shard, Epoch epoch,
                                                       const DispatchIdentity& identity,
                                                       Offset observed) override {
    return t_.claim_identity(shard, epoch, identity, observed);
  }
  Result<std::optional<StoredIdentity>> read_identity(ShardId shard, Epoch epoch,
                                                      const DispatchId& id) override {
    return t_.read_identity(shard, epoch, id);
  }
  Status write_entries(ShardId shard, Epoch epoch, std::span<const MailboxEntry> entries) override {
    return t_.write_entries(shard, epoch, entries);
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

class MemoryHarness final : public BackendHarness {
 public:
  Result<std::unique_ptr<StoreBackend>> open(const BackendContext& context) override {
    if (!rows_) rows_ = make_memory_backend(context);
    return std::unique_ptr<StoreBackend>(std::make_unique<BackendView>(*rows_));
  }
  Status drop_proof(StoreBackend&, const UserId& user, DayBucket bucket) override {
    return memory_backend_drop_proof(*rows_, user, bucket);
  }

 private:
  std::unique_ptr<StoreBackend> rows_;
};

}  // namespace

BackendFixture memory_fixture() {
  BackendFixture f;
  f.name = "memory";
  f.property_runs = 200;
  f.limits.no_clock_identity_ttl = "the memory backend keeps identities for the life of the process";
  f.make_harness = []() -> Result<std::unique_ptr<BackendHarness>> {
    return std::unique_ptr<BackendHarness>(std::make_unique<MemoryHarness>());
  };
  return f;
}

}  // namespace qim::test
