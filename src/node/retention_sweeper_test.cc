// The retention sweeper's schedule and bounds, on the memory store with a manual clock.
#include "node/retention_sweeper.h"

#include <gtest/gtest.h>

#include <set>

#include "mailbox/contract_store.h"
#include "mailbox/memory/memory_backend.h"
#include "mailbox/tests/contract_helpers.h"

namespace qim {
namespace {

constexpr int64_t kStartMs = 20'000 * kDayMs + 3'600'000;  // 01:00 UTC of day 20000
constexpr Epoch kEpoch{1};

class RetentionSweeperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clock_ = std::make_shared<ManualClock>(kStartMs);
    context_.shards = *ShardMap::create(2);
    context_.clock = clock_;
    context_.retention_ms = kDayMs;
    auto backend = make_memory_backend(context_);
    backend_ = backend.get();
    store_ = std::make_unique<ContractStore>(std::move(backend), context_, std::nullopt);
    // Five users of shard 0 and three of shard 1, each with one message on the start day.
    for (uint32_t shard = 0; shard < 2; ++shard) {
      std::vector<UserId> users;
      for (int n = 0; n < (shard == 0 ? 5 : 3); ++n)
        users.push_back(test::user_in_shard(context_.shards, ShardId{shard}, n));
      const auto record = test::make_record("s" + std::to_string(shard),
                                            test::make_message(shard + 1, users[0], kStartMs), {users});
      ASSERT_TRUE(test::materialise(*store_, ShardId{shard}, kEpoch, record, Offset{7}, MailboxSeq{}).ok());
      users_.insert(users_.end(), users.begin(), users.end());
    }
    // The start day is past retention from here on.
    clock_->set_ms((day_bucket_of(kStartMs).value + 1) * kDayMs + context_.retention_ms);
  }

  RetentionSweeper sweeper(uint32_t batch,
                           std::chrono::milliseconds interval = std::chrono::milliseconds(1000)) {
    RetentionSweepOptions o;
    o.batch = batch;
    o.interval = interval;
    return RetentionSweeper(*store_, {ShardId{0}, ShardId{1}}, clock_, o);
  }

  // Users whose trim has moved (their start-day bucket was swept).
  size_t trimmed() {
    size_t n = 0;
    for (const auto& u : users_) {
      auto page = store_->read_mailbox(MailboxQuery{u, MailboxSeq{}, 10});
      EXPECT_TRUE(page.ok()) << page.error().to_string();
      if (page.ok() && !page->trim.is_zero()) ++n;
    }
    return n;
  }

  std::shared_ptr<ManualClock> clock_;
  BackendContext context_;
  StoreBackend* backend_ = nullptr;
  std::unique_ptr<ContractStore> store_;
  std::vector<UserId> users_;
};

TEST_F(RetentionSweeperTest, FirstRoundAtOnceThenOneIntervalAfterTheLast) {
  RetentionSweeper s = sweeper(100);
  EXPECT_TRUE(s.tick()) << "the first round is due at once";
  EXPECT_EQ(s.metrics().rounds, 1u);
  EXPECT_EQ(s.metrics().buckets_expired, 8u);
  EXPECT_EQ(s.metrics().passes, 1u);
  EXPECT_EQ(s.metrics().last_round_ms, clock_->now_ms());
  EXPECT_EQ(trimmed(), 8u);
  EXPECT_FALSE(s.tick());
  clock_->advance_ms(999);
  EXPECT_FALSE(s.tick()) << "not due before one interval";
  EXPECT_EQ(s.next_due_ms(), clock_->now_ms() + 1);
  clock_->advance_ms(1);
  EXPECT_TRUE(s.tick());
  const RetentionMetrics m = s.metrics();
  EXPECT_EQ(m.rounds, 2u);
  EXPECT_EQ(m.users_swept, 16u) << "every listed user is swept again; nothing more expired";
  EXPECT_EQ(m.buckets_expired, 8u);
  EXPECT_EQ(m.errors, 0u);
}

TEST_F(RetentionSweeperTest, EachRoundSweepsAtMostTheBatchAndResumesWhereItStopped) {
  RetentionSweeper s = sweeper(3);
  s.run_round();
  EXPECT_EQ(s.metrics().last_round_users, 3u);
  EXPECT_EQ(trimmed(), 3u) << "a round sweeps at most the batch";
  s.run_round();  // shard 0's last two, then shard 1's first
  EXPECT_EQ(s.metrics().last_round_users, 3u);
  EXPECT_EQ(trimmed(), 6u) << "the second round resumes after the first round's last user";
  EXPECT_EQ(s.metrics().passes, 0u);
  s.run_round();  // shard 1's last two: the pass is complete and the round ends there
  EXPECT_EQ(s.metrics().last_round_users, 2u) << "a round never starts the pass again";
  EXPECT_EQ(s.metrics().passes, 1u);
  EXPECT_EQ(trimmed(), 8u);
  EXPECT_EQ(s.metrics().buckets_expired, 8u);
  s.run_round();  // the next pass begins at shard 0's first user
  EXPECT_EQ(s.metrics().last_round_users, 3u);
  EXPECT_EQ(s.metrics().buckets_expired, 8u);
  EXPECT_EQ(s.metrics().rounds, 4u);
}

TEST_F(RetentionSweeperTest, AMissingProofIsCountedAndTheOthersAreSwept) {
  ASSERT_TRUE(memory_backend_drop_proof(*backend_, users_[1], day_bucket_of(kStartMs)).ok());
  RetentionSweeper s = sweeper(100);
  s.run_round();
  EXPECT_EQ(s.metrics().errors, 1u);
  EXPECT_EQ(s.metrics().users_swept, 7u);
  EXPECT_EQ(s.metrics().buckets_expired, 7u);
  EXPECT_EQ(s.metrics().passes, 1u);
  s.run_round();
  EXPECT_EQ(s.metrics().errors, 2u) << "the user is tried again on the next pass";
}

TEST_F(RetentionSweeperTest, TheThreadRunsRoundsByItselfAndStops) {
  RetentionSweeper s = sweeper(100, std::chrono::milliseconds(10));
  s.start();
  for (int i = 0; i < 2000 && s.metrics().rounds == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  s.stop();
  EXPECT_GE(s.metrics().rounds, 1u);
  EXPECT_EQ(s.metrics().buckets_expired, 8u);
}

}  // namespace
}  // namespace qim
