// The MailboxStore contract suite, part 6: identity writes a backend leaves in flight (ClaimAnswer::
// pending, what scylla does so they overlap the entry writes). The frontier may pass a record only once
// its identity is stored: otherwise a replay of the id at another offset would be claimed afresh and
// shown twice. The backend here is the memory one with a controllable pending write on every claim.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "mailbox/contract_store.h"
#include "mailbox/memory/memory_backend.h"
#include "mailbox/tests/contract_fixture.h"
#include "mailbox/tests/forwarding_backend.h"

namespace qim::test {
namespace {

// A write that "lands" with the outcome the test sets; counts its waits.
class ScriptedWrite final : public PendingWrite {
 public:
  explicit ScriptedWrite(Status outcome) : outcome_(std::move(outcome)) {}
  Status wait() override {
    waits++;
    return outcome_;
  }
  int waits = 0;

 private:
  Status outcome_;
};

// Forwards to the memory rows, and answers each claim that stored an identity with a ScriptedWrite still
// in flight. write_frontier notes how many of those writes nobody had waited for when it was called.
class LeavesIdentityWritesPending final : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  std::vector<ClaimAnswer> claim_identities(ShardId s, Epoch e,
                                            std::span<const IdentityClaim> claims) override {
    auto answers = ForwardingBackend::claim_identities(s, e, claims);
    for (ClaimAnswer& a : answers) {
      if (!a.stored.ok() || a.stored->has_value()) continue;
      auto write = std::make_shared<ScriptedWrite>(next_outcome);
      writes.push_back(write);
      a.pending = write;
    }
    return answers;
  }
  Status write_frontier(ShardId shard, Epoch epoch, MailboxSeq expected_previous, MailboxSeq next) override {
    for (const auto& w : writes) unwaited_at_frontier_write += w->waits == 0 ? 1 : 0;
    frontier_writes++;
    return ForwardingBackend::write_frontier(shard, epoch, expected_previous, next);
  }

  Status next_outcome;  // what the next claims' writes land with
  std::vector<std::shared_ptr<ScriptedWrite>> writes;
  int unwaited_at_frontier_write = 0, frontier_writes = 0;
};

class PendingIdentityTest : public ::testing::Test {
 protected:
  PendingIdentityTest() {
    context_.clock = std::make_shared<ManualClock>(kStartMs);
    rows_ = make_memory_backend(context_);
    auto backend = std::make_unique<LeavesIdentityWritesPending>(*rows_);
    backend_ = backend.get();
    store_ = std::make_unique<ContractStore>(std::move(backend), context_, std::nullopt);
    alice_ = user_in_shard(context_.shards, kShard, 0);
    bob_ = user_in_shard(context_.shards, kShard, 1);
  }
  // A reader with its own ContractStore over the same rows: it knows nothing the writer cached.
  std::unique_ptr<ContractStore> fresh_reader() {
    return std::make_unique<ContractStore>(std::make_unique<ForwardingBackend>(*rows_), context_,
                                           std::nullopt);
  }
  DispatchRecord to_bob(std::string_view id, uint64_t message_id) {
    return make_record(id, make_message(message_id, alice_, kStartMs), {{bob_}});
  }

  BackendContext context_;
  std::unique_ptr<StoreBackend> rows_;
  LeavesIdentityWritesPending* backend_ = nullptr;
  std::unique_ptr<ContractStore> store_;
  UserId alice_, bob_;
};

TEST_F(PendingIdentityTest, APageIsFinishedOnlyAfterEveryIdentityWriteItBeganIsWaitedFor) {
  // Settle the shard's first frontier so the page chains on a non-zero one.
  const auto first = to_bob("first", 1);
  ASSERT_TRUE(is_ok(materialise(*store_, kShard, kEpoch, first, Offset{10}, MailboxSeq{})));
  std::vector<DispatchRecord> records;
  for (int i = 0; i < 3; ++i) records.push_back(to_bob("d" + std::to_string(i), 2 + i));
  std::vector<BeginRequest> page;
  for (uint64_t i = 0; i < 3; ++i) page.push_back({&records[i].identity, Offset{11 + i}});
  auto begun = store_->begin_dispatch_page(kShard, kEpoch, page);
  ASSERT_TRUE(is_ok(begun));
  std::vector<ChunkWrite> chunks;
  for (const auto& r : records) {
    for (const auto& c : chunk_writes(r)) chunks.push_back(c);
  }
  ASSERT_TRUE(is_ok(store_->write_chunks(kShard, kEpoch, chunks)));
  std::vector<PageItem> items;
  MailboxSeq running = seq_of(1, 10);
  for (uint64_t i = 0; i < 3; ++i) {
    items.push_back(PageItem{records[i].identity.id, uniform_advances(running, seq_of(1, 11 + i))});
    running = seq_of(1, 11 + i);
  }
  auto finished = store_->finish_dispatch_page(kShard, kEpoch, items);
  ASSERT_TRUE(is_ok(finished));
  EXPECT_EQ(finished->frontier, seq_of(1, 13));
  ASSERT_EQ(backend_->writes.size(), 4u) << "one pending write per claim that stored an identity";
  EXPECT_EQ(backend_->unwaited_at_frontier_write, 0) << "the frontier moved past an identity in flight";
  auto read = read_all(*fresh_reader(), bob_);
  ASSERT_TRUE(is_ok(read));
  EXPECT_EQ(read->size(), 4u);
}

TEST_F(PendingIdentityTest, AFailedIdentityWriteFailsTheFinishUntilTheRecordIsBegunAgain) {
  const auto first = to_bob("first", 1);
  ASSERT_TRUE(is_ok(materialise(*store_, kShard, kEpoch, first, Offset{10}, MailboxSeq{})));
  const int frontier_writes = backend_->frontier_writes;

  backend_->next_outcome = Error(Errc::kTransport, "identity write timed out");
  const auto d = to_bob("d", 2);
  auto failed = materialise(*store_, kShard, kEpoch, d, Offset{11}, seq_of(1, 10));
  ASSERT_TRUE(fails_with(failed, Errc::kTransport));
  EXPECT_NE(failed.error().message().find("identity write timed out"), std::string::npos)
      << failed.error().to_string();
  EXPECT_EQ(backend_->frontier_writes, frontier_writes) << "nothing is written after the failed identity";
  // Finishing again without a new begin still fails: the failed write stays with the record.
  EXPECT_TRUE(fails_with(
      store_->finish_dispatch(kShard, kEpoch, d.identity.id, uniform_advances(seq_of(1, 10), seq_of(1, 11))),
      Errc::kTransport));
  auto reader = fresh_reader();
  auto frontier = frontier_of(*reader, kShard, kEpoch);
  ASSERT_TRUE(is_ok(frontier));
  EXPECT_EQ(*frontier, seq_of(1, 10));
  auto before = read_all(*reader, bob_);
  ASSERT_TRUE(is_ok(before));
  EXPECT_EQ(before->size(), 1u) << "d's entry is written but not visible";

  // The retry begins the record again; its claim now answers with the identity stored (the memory rows
  // kept it) or with a write that lands, and the finish passes.
  backend_->next_outcome = Status{};
  auto retried = materialise(*store_, kShard, kEpoch, d, Offset{11}, seq_of(1, 10));
  ASSERT_TRUE(is_ok(retried));
  EXPECT_EQ(retried->frontier, seq_of(1, 11));
  auto after = read_all(*fresh_reader(), bob_);
  ASSERT_TRUE(is_ok(after));
  ASSERT_EQ(after->size(), 2u) << "shown once";
  EXPECT_EQ((*after)[1].seq, seq_of(1, 11));
}

// A store dropped (a graceful restart) or a record abandoned leaves no identity write behind: the next
// store over the same data, or a later begin of the id, must read the claim these begins answered.
TEST_F(PendingIdentityTest, DroppingTheStoreOrAbandoningARecordWaitsForItsIdentityWrite) {
  const auto kept = to_bob("kept", 1);
  const auto dropped = to_bob("dropped", 2);
  ASSERT_TRUE(is_ok(store_->begin_dispatch(kShard, kEpoch, kept.identity, Offset{10})));
  ASSERT_TRUE(is_ok(store_->begin_dispatch(kShard, kEpoch, dropped.identity, Offset{11})));
  ASSERT_EQ(backend_->writes.size(), 2u);
  const auto kept_write = backend_->writes[0];
  const auto dropped_write = backend_->writes[1];

  store_->abandon_dispatch(kShard, kEpoch, dropped.identity.id);
  EXPECT_EQ(dropped_write->waits, 1) << "abandon forgot a record whose identity write was in flight";
  EXPECT_EQ(kept_write->waits, 0);

  store_.reset();
  EXPECT_EQ(kept_write->waits, 1) << "the store was dropped with an identity write in flight";
}

}  // namespace
}  // namespace qim::test
