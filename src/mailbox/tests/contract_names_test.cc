// Users whose names are prefixes or near-spellings of each other never share stored rows, on every
// backend (issue 8, item 1: an audit of every key that concatenates a user id). The embedded rows
// length-prefix the user, Redis keys end in it or put a fixed-format field after it, CQL keys it as a
// column: one user's range read must never reach another's rows, whatever the names.
#include <gtest/gtest.h>

#include <map>

#include "mailbox/tests/contract_helpers.h"

namespace qim::test {
namespace {

constexpr int64_t kStartMs = 20'000 * kDayMs + 3'600'000;  // 01:00 UTC of day 20000
constexpr Epoch kEpoch{1};
constexpr ShardId kShard{0};

class NamesContractTest : public ::testing::TestWithParam<BackendFixture> {
 protected:
  void SetUp() override {
    if (auto why = GetParam().unavailable()) GTEST_SKIP() << *why;
    clock_ = std::make_shared<ManualClock>(kStartMs);
    context_.shards = *ShardMap::create(1);  // every user on the one shard: their rows sit side by side
    context_.clock = clock_;
    context_.retention_ms = 30 * kDayMs;
    session_ = std::make_unique<StoreSession>(GetParam(), context_);
    ASSERT_TRUE(is_ok(session_->start()));
  }

  std::shared_ptr<ManualClock> clock_;
  BackendContext context_;
  std::unique_ptr<StoreSession> session_;
};

TEST_P(NamesContractTest, LookAlikeUsersNeverReadEachOthersRows) {
  const std::vector<std::string> names = {"a", "a.b", "a@x", "a-b", "a_b", "A", "ab", "a.", "a.bc", "b"};
  const UserId sender = *UserId::parse("z");
  std::map<std::string, std::vector<uint64_t>> sent;  // message ids per recipient
  uint64_t offset = 0;
  MailboxSeq previous;
  // Two day buckets, so proofs and ledgers of several days exist side by side too.
  for (int day = 0; day < 2; ++day) {
    for (const auto& name : names) {
      ++offset;
      const UserId to = *UserId::parse(name);
      const DispatchRecord r =
          make_record("n" + std::to_string(offset), make_message(offset, sender, clock_->now_ms()), {{to}});
      auto done = materialise(session_->store(), kShard, kEpoch, r, Offset{offset}, previous);
      ASSERT_TRUE(is_ok(done)) << name;
      previous = seq_of(kEpoch.value, offset);
      sent[name].push_back(offset);
    }
    clock_->advance_ms(kDayMs);
  }
  ASSERT_TRUE(is_ok(session_->restart()));  // read through a fresh store: no cache of the writer
  for (const auto& name : names) {
    auto entries = read_all(session_->store(), *UserId::parse(name));
    ASSERT_TRUE(is_ok(entries)) << name;
    std::vector<uint64_t> got;
    for (const auto& e : *entries) {
      EXPECT_EQ(e.user.str(), name);
      got.push_back(e.message.id.value);
    }
    EXPECT_EQ(got, sent[name]) << name << " read rows that are not its own";
  }
}

std::string fixture_name(const ::testing::TestParamInfo<BackendFixture>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Backends, NamesContractTest, ::testing::ValuesIn(contract_backends()), fixture_name);

}  // namespace
}  // namespace qim::test
