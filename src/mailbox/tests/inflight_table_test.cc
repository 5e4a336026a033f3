// The in-flight table stays bounded: every path that leaves a begun record unfinished (a record skipped
// after its begin, a page that failed after its begins, a finish whose frontier write landed but reported
// failure, an Existing observation of a covered record) is cleaned up, by the next frontier move or by
// abandon_dispatch, and the table's size is what inflight_records() reports.
#include <gtest/gtest.h>

#include <atomic>

#include "mailbox/contract_store.h"
#include "mailbox/memory/memory_backend.h"
#include "mailbox/tests/contract_helpers.h"

namespace qim::test {
namespace {

// A memory backend whose frontier write, while `land_then_fail` is set, lands and then reports Timeout:
// the uncertain write of a real backend.
class UncertainFrontier final : public StoreBackend {
 public:
  explicit UncertainFrontier(const BackendContext& context) : t_(make_memory_backend(context)) {}
  std::atomic<bool> land_then_fail{false};

  std::string_view name() const override { return t_->name(); }
  uint32_t declared_page_limit() const override { return t_->declared_page_limit(); }
  Result<std::optional<StoredIdentity>> claim_identity(ShardId shard, Epoch epoch,
                                                       const DispatchIdentity& identity,
                                                       Offset observed) override {
    return t_->claim_identity(shard, epoch, identity, observed);
  }
  Result<std::optional<StoredIdentity>> read_identity(ShardId shard, Epoch epoch,
                                                      const DispatchId& id) override {
    return t_->read_identity(shard, epoch, id);
  }
  Status write_entries(ShardId shard, Epoch epoch, std::span<const MailboxEntry> entries) override {
    return t_->write_entries(shard, epoch, entries);
  }
  Status redact_entries(std::span<const EntryKey> entries) override { return t_->redact_entries(entries); }
  Status redact_edit_entries(std::span<const EntryKey> entries, const EntryBodyRedaction& redact) override {
    return t_->redact_edit_entries(entries, redact);
  }
  Result<std::optional<MailboxSeq>> read_frontier(ShardId shard) override { return t_->read_frontier(shard); }
  Status write_frontier(ShardId shard, Epoch epoch, MailboxSeq expected_previous, MailboxSeq next) override {
    QIM_RETURN_IF_ERROR(t_->write_frontier(shard, epoch, expected_previous, next));
    if (land_then_fail)
      return Error(Errc::kTimeout, "injected: the frontier write landed, the answer did not");
    return {};
  }
  Result<std::vector<MailboxEntry>> read_entries(const UserId& user, MailboxSeq after, MailboxSeq upto,
                                                 uint32_t limit) override {
    return t_->read_entries(user, after, upto, limit);
  }
  Result<std::vector<MailboxSeq>> read_frontiers(ShardId shard) override { return t_->read_frontiers(shard); }
  Result<std::vector<UserId>> list_ledger_users(ShardId shard, const std::string& after,
                                                uint32_t limit) override {
    return t_->list_ledger_users(shard, after, limit);
  }
  Result<RetentionLedger> read_ledger(const UserId& user) override { return t_->read_ledger(user); }
  Result<std::optional<MailboxSeq>> read_bucket_proof(const UserId& user, DayBucket bucket) override {
    return t_->read_bucket_proof(user, bucket);
  }
  Status commit_sweep(const UserId& user, const RetentionLedger& seen, MailboxSeq new_trim,
                      std::span<const DayBucket> expired) override {
    return t_->commit_sweep(user, seen, new_trim, expired);
  }
  Result<uint64_t> gc_completed_dispatches() override { return t_->gc_completed_dispatches(); }
  OpCounters& counters() override { return t_->counters(); }

 private:
  std::unique_ptr<StoreBackend> t_;
};

constexpr ShardId kShard{0};
constexpr Epoch kEpoch{1};

class InflightTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    context_.shards = *ShardMap::create(4);
    context_.clock = std::make_shared<ManualClock>(1'800'000'000'000);
    auto backend = std::make_unique<UncertainFrontier>(context_);
    backend_ = backend.get();
    store_ = std::make_unique<ContractStore>(std::move(backend), context_, std::nullopt);
    bob_ = user_in_shard(context_.shards, kShard, 0);
    // A non-zero frontier to start from: record 0 at offset 5.
    ASSERT_TRUE(is_ok(materialise(*store_, kShard, kEpoch, rec(0), Offset{5}, MailboxSeq{})));
    ASSERT_EQ(store_->inflight_records(), 0u);
  }

  DispatchRecord rec(uint64_t n) {
    return make_record("d" + std::to_string(n), make_message(100 + n, bob_, 1'800'000'000'000), {{bob_}});
  }
  Status begin_and_write(const DispatchRecord& r, uint64_t offset) {
    QIM_ASSIGN_OR_RETURN(BeginOutcome b, store_->begin_dispatch(kShard, kEpoch, r.identity, Offset{offset}));
    if (b.needs_entries) return store_->write_chunks(kShard, kEpoch, chunk_writes(r));
    return {};
  }
  static PageItem item(const DispatchRecord& r, uint64_t previous, uint64_t observed) {
    return PageItem{r.identity.id, uniform_advances(seq_of(1, previous), seq_of(1, observed))};
  }

  BackendContext context_;
  UncertainFrontier* backend_ = nullptr;
  std::unique_ptr<ContractStore> store_;
  UserId bob_;
};

TEST_F(InflightTableTest, ARecordSkippedAfterItsBeginIsDroppedWhenTheFrontierPassesIt) {
  // Record 1 is begun and then skipped (its page never finishes it); record 2 moves the frontier past it.
  ASSERT_TRUE(is_ok(begin_and_write(rec(1), 6)));
  EXPECT_EQ(store_->inflight_records(), 1u);
  ASSERT_TRUE(is_ok(materialise(*store_, kShard, kEpoch, rec(2), Offset{7}, seq_of(1, 5))));
  EXPECT_EQ(store_->inflight_records(), 0u);
}

TEST_F(InflightTableTest, AbandonForgetsASkippedRecordAtOnce) {
  ASSERT_TRUE(is_ok(store_->begin_dispatch(kShard, kEpoch, rec(1).identity, Offset{6})));
  EXPECT_EQ(store_->inflight_records(), 1u);
  store_->abandon_dispatch(kShard, kEpoch, rec(1).identity.id);
  EXPECT_EQ(store_->inflight_records(), 0u);
  EXPECT_TRUE(fails_with(store_->write_chunks(kShard, kEpoch, chunk_writes(rec(1))), Errc::kInvariant));
}

TEST_F(InflightTableTest, AnUncertainFinishThatLandedIsCleanedUpByTheNextFinish) {
  ASSERT_TRUE(is_ok(begin_and_write(rec(1), 6)));
  ASSERT_TRUE(is_ok(begin_and_write(rec(2), 7)));
  backend_->land_then_fail = true;
  std::vector<PageItem> page = {item(rec(1), 5, 6), item(rec(2), 6, 7)};
  EXPECT_TRUE(fails_with(store_->finish_dispatch_page(kShard, kEpoch, page), Errc::kTimeout));
  backend_->land_then_fail = false;
  // The worker's recovery: W is reloaded and covers both records, which it drops without finishing.
  auto w = frontier_of(*store_, kShard, kEpoch);
  ASSERT_TRUE(is_ok(w));
  ASSERT_EQ(*w, seq_of(1, 7));
  EXPECT_EQ(store_->inflight_records(), 2u);  // still held: nothing finished them
  ASSERT_TRUE(is_ok(materialise(*store_, kShard, kEpoch, rec(3), Offset{8}, seq_of(1, 7))));
  EXPECT_EQ(store_->inflight_records(), 0u);
}

TEST_F(InflightTableTest, AnExistingObservationOfACoveredRecordLeavesNothing) {
  // Record 0 (finished at offset 5) is observed again at offset 6: Existing, covered. Its page then fails
  // before the finish; the next record's finish must drop it.
  auto again = store_->begin_dispatch(kShard, kEpoch, rec(0).identity, Offset{6});
  ASSERT_TRUE(is_ok(again));
  EXPECT_EQ(again->kind, BeginKind::kExisting);
  EXPECT_FALSE(again->needs_entries);
  EXPECT_EQ(store_->inflight_records(), 1u);
  ASSERT_TRUE(is_ok(materialise(*store_, kShard, kEpoch, rec(1), Offset{7}, seq_of(1, 5))));
  EXPECT_EQ(store_->inflight_records(), 0u);
}

TEST_F(InflightTableTest, RecordsOfAnOlderEpochAreDroppedWhenANewerEpochMovesTheFrontier) {
  ASSERT_TRUE(is_ok(store_->begin_dispatch(kShard, kEpoch, rec(1).identity, Offset{6})));
  ASSERT_TRUE(is_ok(materialise(*store_, kShard, Epoch{2}, rec(2), Offset{7}, seq_of(1, 5))));
  EXPECT_EQ(store_->inflight_records(), 0u);
}

}  // namespace
}  // namespace qim::test
