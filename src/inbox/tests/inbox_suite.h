#pragma once
// The parameterized fixture of the inbox suites: a session over one inbox fixture, a manual clock, and
// three users of the written shard.

#include <gtest/gtest.h>

#include <deque>
#include <memory>

#include "core/clock.h"
#include "inbox/tests/inbox_test_helpers.h"

namespace qim::test {

class InboxSuite : public ::testing::TestWithParam<InboxFixture> {
 protected:
  void SetUp() override {
    if (auto why = GetParam().unavailable()) GTEST_SKIP() << *why;
    if (auto why = GetParam().mailbox.unavailable()) GTEST_SKIP() << *why;
    clock_ = std::make_shared<ManualClock>(20'000 * kDayMs);
    context_.shards = *ShardMap::create(2);
    context_.clock = clock_;
    context_.retention_ms = 2 * kDayMs;
    alice_ = user_in_shard(context_.shards, kInboxShard, 0);
    bob_ = user_in_shard(context_.shards, kInboxShard, 1);
    carol_ = user_in_shard(context_.shards, kInboxShard, 2);
    session_ = std::make_unique<InboxSession>(GetParam(), context_);
    ASSERT_TRUE(is_ok(session_->start()));
  }

  ConversationId direct(const UserId& a, const UserId& b) { return *direct_conversation(a, b); }
  ConversationId group(const std::string& name) { return Conversation::group(*GroupId::parse(name))->id(); }
  // Delivers one message of `c` by `sender` to `recipients` at the next offset; returns its seq.
  MailboxSeq send(const ConversationId& c, const UserId& sender, const std::vector<UserId>& recipients,
                  bool system = false) {
    records_.push_back(
        inbox_record(inbox_message(next_id_++, c, sender, clock_->now_ms(), system), recipients));
    const uint64_t offset = next_offset_;
    auto done = deliver(session_->store(), epoch_, std::span(&records_.back(), 1), next_offset_);
    EXPECT_TRUE(is_ok(done));
    return *compose(epoch_, Offset{offset});
  }

  std::shared_ptr<ManualClock> clock_;
  BackendContext context_;
  UserId alice_, bob_, carol_;
  std::unique_ptr<InboxSession> session_;
  std::deque<DispatchRecord> records_;  // stable addresses: the store may keep pointers during a call
  uint64_t next_id_ = 1;
  uint64_t next_offset_ = 1;
  Epoch epoch_{1};
};

inline std::string fixture_name(const ::testing::TestParamInfo<InboxFixture>& info) {
  return info.param.name;
}

}  // namespace qim::test
