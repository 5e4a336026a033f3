#pragma once
// The fixture of the MailboxStore contract suite (ADR-0022 acceptance list, less what is specific to CQL),
// shared by the contract_*_test.cc files. Each test gets a fresh store over one backend of
// contract_backends(); "restart" simulates a process restart over the same stored data (the in-flight
// table is then empty). ContractTest is instantiated over the backends once, in contract_test.cc.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mailbox/tests/contract_helpers.h"

namespace qim::test {

constexpr int64_t kStartMs = 20'000 * kDayMs + 3'600'000;  // 01:00 UTC of day 20000
constexpr Epoch kEpoch{1};
constexpr ShardId kShard{0};

// Skips the test when the backend under test has the given limit (see BackendLimits).
#define SKIP_IF_LIMITED(limit) \
  if (GetParam().limits.limit) GTEST_SKIP() << GetParam().name << ": " << *GetParam().limits.limit

// Skips a test of multi-record pages when the backend finishes fewer records per page (redis declares 1:
// ADR-0022 section 4, behaviour unchanged). Use after SetUp, where store() exists.
#define SKIP_UNLESS_PAGES_OF(n)                                                          \
  if (store().finish_page_limit() < (n))                                                 \
  GTEST_SKIP() << GetParam().name << " finishes at most " << store().finish_page_limit() \
               << " record(s) per page (ADR-0022 section 4)"

class ContractTest : public ::testing::TestWithParam<BackendFixture> {
 protected:
  void SetUp() override {
    if (auto why = GetParam().unavailable()) GTEST_SKIP() << *why;
    clock_ = std::make_shared<ManualClock>(kStartMs);
    context_.shards = *ShardMap::create(2);
    context_.clock = clock_;
    context_.retention_ms = 30 * kDayMs;
    alice_ = user_in_shard(context_.shards, kShard, 0);
    bob_ = user_in_shard(context_.shards, kShard, 1);
    carol_ = user_in_shard(context_.shards, kShard, 2);
    stranger_ = user_in_shard(context_.shards, ShardId{1}, 0);
    session_ = std::make_unique<StoreSession>(GetParam(), context_);
    ASSERT_TRUE(is_ok(session_->start()));
  }

  MailboxStore& store() { return session_->store(); }
  void restart() { ASSERT_TRUE(is_ok(session_->restart())); }

  // A one-to-one style record from alice, sent now, to the given recipient chunks.
  DispatchRecord record(std::string_view id, uint64_t message_id, std::vector<std::vector<UserId>> chunks) {
    return make_record(id, make_message(message_id, alice_, clock_->now_ms()), std::move(chunks));
  }
  DispatchRecord to_bob(std::string_view id, uint64_t message_id) {
    return record(id, message_id, {{bob_, alice_}});
  }

  Result<BeginOutcome> begin(const DispatchRecord& r, uint64_t observed, Epoch epoch = kEpoch) {
    return store().begin_dispatch(kShard, epoch, r.identity, Offset{observed});
  }
  Status write(const DispatchRecord& r, const std::vector<uint32_t>& chunks = {}, Epoch epoch = kEpoch) {
    return store().write_chunks(kShard, epoch, chunk_writes(r, chunks));
  }
  Result<FinishOutcome> finish(const DispatchRecord& r, MailboxSeq previous, uint64_t observed,
                               Epoch epoch = kEpoch) {
    return store().finish_dispatch(kShard, epoch, r.identity.id,
                                   uniform_advances(previous, *compose(epoch, Offset{observed})));
  }
  Result<FinishOutcome> materialise(const DispatchRecord& r, uint64_t observed, MailboxSeq previous,
                                    Epoch epoch = kEpoch) {
    return test::materialise(store(), kShard, epoch, r, Offset{observed}, previous);
  }
  MailboxSeq frontier(Epoch epoch = kEpoch) {
    auto f = frontier_of(store(), kShard, epoch);
    EXPECT_TRUE(is_ok(f));
    return f.ok() ? *f : MailboxSeq{};
  }
  std::vector<MailboxEntry> mailbox(const UserId& user, MailboxSeq after = {}) {
    auto entries = read_all(store(), user, after);
    EXPECT_TRUE(is_ok(entries));
    return entries.ok() ? *entries : std::vector<MailboxEntry>{};
  }
  std::vector<MailboxSeq> seqs(const UserId& user, MailboxSeq after = {}) {
    std::vector<MailboxSeq> out;
    for (const auto& e : mailbox(user, after)) out.push_back(e.seq);
    return out;
  }
  OpCounts ops() { return store().op_counts(); }

  std::shared_ptr<ManualClock> clock_;
  BackendContext context_;
  UserId alice_, bob_, carol_, stranger_;
  std::unique_ptr<StoreSession> session_;
};

// Names each instantiation after its backend: Backends/ContractTest.X/memory.
inline std::string fixture_name(const ::testing::TestParamInfo<BackendFixture>& info) {
  return info.param.name;
}

}  // namespace qim::test
