// The MailboxStore contract suite, part 4: bad input gets a clear error and writes nothing (fixture in
// contract_fixture.h).
#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "mailbox/tests/contract_fixture.h"

namespace qim::test {
namespace {

// --- Bad input: a clear error and nothing written ---------------------------------------------------

class BadInputTest : public ContractTest {
 protected:
  void SetUp() override {
    ContractTest::SetUp();
    if (IsSkipped()) return;
    before_ = ops();
  }
  void TearDown() override {
    if (IsSkipped() || !session_) return;
    const OpCounts delta = ops() - before_;
    EXPECT_EQ(delta.inserts, 0u) << "bad input wrote rows";
    EXPECT_EQ(delta.updates, 0u) << "bad input wrote rows";
    EXPECT_EQ(delta.lwts, 0u) << "bad input wrote rows";
  }
  OpCounts before_;
};

TEST_P(BadInputTest, BeginDispatch) {
  const auto r = to_bob("d1", 1);
  EXPECT_TRUE(fails_with(begin(r, kMaxOffset + 1), Errc::kInvalidArgument)) << "offset >= 2^48";
  EXPECT_TRUE(fails_with(begin(r, 10, Epoch{kMaxEpoch + 1}), Errc::kInvalidArgument)) << "epoch >= 2^16";
  EXPECT_TRUE(
      fails_with(store().begin_dispatch(ShardId{2}, kEpoch, r.identity, Offset{10}), Errc::kInvalidArgument))
      << "unknown shard";
  // An empty manifest is no bad input (a recall's record of former recipients only, decision 160).
  DispatchIdentity empty_chunk = r.identity;
  empty_chunk.manifest.entry_counts = {2, 0};
  EXPECT_TRUE(
      fails_with(store().begin_dispatch(kShard, kEpoch, empty_chunk, Offset{10}), Errc::kInvalidArgument));
  DispatchIdentity no_id = r.identity;
  no_id.id = DispatchId{};
  EXPECT_TRUE(fails_with(store().begin_dispatch(kShard, kEpoch, no_id, Offset{10}), Errc::kInvalidArgument));
  EXPECT_TRUE(fails_with(store().dispatch_progress(kShard, kEpoch, r.identity.id), Errc::kNotFound))
      << "nothing was recorded";
}

TEST_P(BadInputTest, WriteChunks) {
  const auto r = record("d1", 1, {{bob_, alice_}, {carol_}});
  auto write_one = [&](ChunkWrite c, ShardId shard = kShard, Epoch epoch = kEpoch) {
    return store().write_chunks(shard, epoch, std::span(&c, 1));
  };
  const std::vector<UserId> one = {bob_};
  EXPECT_TRUE(fails_with(write_one({r.identity.id, 0, &r.message, r.chunks[0]}), Errc::kInvariant))
      << "not begun";
  ASSERT_TRUE(is_ok(begin(r, 10)));
  before_ = ops();
  EXPECT_TRUE(fails_with(write_one({r.identity.id, 2, &r.message, one}), Errc::kInvalidArgument))
      << "chunk index out of range";
  EXPECT_TRUE(fails_with(write_one({r.identity.id, 0, &r.message, one}), Errc::kInvalidArgument))
      << "wrong recipient count";
  const std::vector<UserId> foreign = {bob_, stranger_};
  EXPECT_TRUE(fails_with(write_one({r.identity.id, 0, &r.message, foreign}), Errc::kInvalidArgument))
      << "recipient of another shard";
  Message huge = r.message;
  huge.body.assign(kMaxBodyBytes + 1, 'x');
  EXPECT_TRUE(fails_with(write_one({r.identity.id, 0, &huge, r.chunks[0]}), Errc::kInvalidArgument))
      << "body too large";
  EXPECT_TRUE(fails_with(write_one({r.identity.id, 0, nullptr, r.chunks[0]}), Errc::kInvalidArgument))
      << "no message";
  EXPECT_TRUE(
      fails_with(write_one({r.identity.id, 0, &r.message, r.chunks[0]}, ShardId{2}), Errc::kInvalidArgument))
      << "unknown shard";
  EXPECT_TRUE(fails_with(write_one({r.identity.id, 0, &r.message, r.chunks[0]}, kShard, Epoch{kMaxEpoch + 1}),
                         Errc::kInvalidArgument));
  // One good chunk and one bad in the same call: neither is written.
  const std::vector<UserId> foreign_one = {stranger_};
  const std::vector<ChunkWrite> mixed = {{r.identity.id, 0, &r.message, r.chunks[0]},
                                         {r.identity.id, 1, &r.message, foreign_one}};
  EXPECT_TRUE(fails_with(store().write_chunks(kShard, kEpoch, mixed), Errc::kInvalidArgument));
  auto progress = store().dispatch_progress(kShard, kEpoch, r.identity.id);
  ASSERT_TRUE(is_ok(progress));
  EXPECT_TRUE(progress->completed_chunks.empty());
}

TEST_P(BadInputTest, FinishDispatchAndPages) {
  const auto r = to_bob("d1", 1);
  ASSERT_TRUE(is_ok(begin(r, 10)));
  ASSERT_TRUE(is_ok(write(r)));
  before_ = ops();
  const auto advances = uniform_advances(MailboxSeq{}, seq_of(1, 10));
  EXPECT_TRUE(fails_with(store().finish_dispatch(ShardId{2}, kEpoch, r.identity.id, advances),
                         Errc::kInvalidArgument));
  EXPECT_TRUE(fails_with(store().finish_dispatch(kShard, Epoch{kMaxEpoch + 1}, r.identity.id, advances),
                         Errc::kInvalidArgument));
  EXPECT_TRUE(fails_with(store().finish_dispatch(kShard, kEpoch, *DispatchId::parse("never-begun"), advances),
                         Errc::kInvariant));
  EXPECT_TRUE(fails_with(store().finish_dispatch_page(kShard, kEpoch, {}), Errc::kInvalidArgument))
      << "empty page";
  const std::vector<PageItem> too_long(store().finish_page_limit() + 1, PageItem{r.identity.id, advances});
  EXPECT_TRUE(fails_with(store().finish_dispatch_page(kShard, kEpoch, too_long), Errc::kInvalidArgument));
  const std::vector<PageItem> bad_shard = {{r.identity.id, advances}};
  EXPECT_TRUE(
      fails_with(store().finish_dispatch_page(ShardId{7}, kEpoch, bad_shard), Errc::kInvalidArgument));
  EXPECT_EQ(frontier(), MailboxSeq{});
}

TEST_P(BadInputTest, ReadsAndHousekeeping) {
  EXPECT_TRUE(fails_with(store().lane_watermarks(ShardId{2}, kEpoch), Errc::kInvalidArgument));
  EXPECT_TRUE(fails_with(store().lane_watermarks(kShard, Epoch{kMaxEpoch + 1}), Errc::kInvalidArgument));
  EXPECT_TRUE(
      fails_with(store().read_mailbox(MailboxQuery{UserId{}, MailboxSeq{}, 10}), Errc::kInvalidArgument));
  EXPECT_TRUE(fails_with(store().read_mailbox(MailboxQuery{bob_, MailboxSeq{}, 0}), Errc::kInvalidArgument));
  EXPECT_TRUE(
      fails_with(store().read_mailbox(MailboxQuery{bob_, MailboxSeq{}, 1001}), Errc::kInvalidArgument));
  const auto id = *DispatchId::parse("d1");
  EXPECT_TRUE(fails_with(store().dispatch_progress(ShardId{2}, kEpoch, id), Errc::kInvalidArgument));
  EXPECT_TRUE(
      fails_with(store().dispatch_progress(kShard, Epoch{kMaxEpoch + 1}, id), Errc::kInvalidArgument));
  EXPECT_TRUE(fails_with(store().sweep_retention(UserId{}), Errc::kInvalidArgument));
  EXPECT_TRUE(fails_with(store().list_retention_users(ShardId{2}, "", 10), Errc::kInvalidArgument));
  EXPECT_TRUE(fails_with(store().list_retention_users(kShard, "", 0), Errc::kInvalidArgument));
  EXPECT_TRUE(fails_with(store().list_retention_users(kShard, "", 1001), Errc::kInvalidArgument));
}

INSTANTIATE_TEST_SUITE_P(Backends, BadInputTest, ::testing::ValuesIn(contract_backends()), fixture_name);

}  // namespace
}  // namespace qim::test
