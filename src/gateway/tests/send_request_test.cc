// SEND as a callable function (send_request.h): what the WebSocket frame and the server API both call.
#include "gateway/send_request.h"

#include <gtest/gtest.h>

#include "gateway/tests/fake_log.h"

namespace qim {
namespace {

UserId user(const char* name) {
  return *UserId::parse(name);
}

SendFrame to(const char* peer, const char* id = "c1") {
  SendFrame f;
  f.client_msg_id = id;
  f.to = user(peer);
  f.body = "hi";
  return f;
}

SendFrame into(const char* conversation, const char* id = "c1") {
  SendFrame f;
  f.client_msg_id = id;
  f.conversation = *ConversationId::parse(conversation);
  f.body = "hi";
  return f;
}

TEST(SendRequest, Targets) {
  auto direct = resolve_send_target(user("alice"), to("bob"));
  ASSERT_TRUE(direct.ok);
  EXPECT_EQ(direct.conversation.str(), "d:alice:bob");
  EXPECT_FALSE(direct.group);
  auto other = resolve_send_target(user("alice"), into("d:bob:carol"));
  EXPECT_FALSE(other.ok);
  EXPECT_EQ(other.code, WireCode::kForbidden);
  auto group = resolve_send_target(user("alice"), into("g:0123abcd"));
  ASSERT_TRUE(group.ok);
  ASSERT_TRUE(group.group);
  EXPECT_EQ(group.group->str(), "0123abcd");
  auto system_id = resolve_send_target(user("alice"), into("g:0123abcd", "~group:add"));
  EXPECT_FALSE(system_id.ok);
  EXPECT_EQ(system_id.code, WireCode::kInvalidArgument);
}

struct Outcome {
  bool called = false;
  Result<SentMessage> sent = Error(Errc::kInvariant, "not called");
  bool duplicate = false;
};

TEST(SendRequest, OneAppendPerKeyAndARepeatIsAnsweredAtOnce) {
  testing::FakeLog log(4);
  MemorySendDedup dedup(100, 86'400'000);
  SystemClock clock;
  int started = 0, finished = 0;
  SendDoor door{&log, &dedup, &clock, [&] { ++started; }, [&] { ++finished; }};
  const auto conversation = *ConversationId::parse("d:alice:bob");
  Outcome first;
  auto at_once = submit_send(door, user("alice"), *DeviceId::parse("d1"), "c1", conversation, "hi",
                             [&](const Result<SentMessage>& s, bool dup) {
                               first = {true, s, dup};
                             });
  EXPECT_FALSE(at_once);
  ASSERT_TRUE(first.called);  // the fake log completes at once
  ASSERT_TRUE(first.sent.ok());
  EXPECT_FALSE(first.duplicate);
  EXPECT_EQ(started, 1);
  EXPECT_EQ(finished, 1);
  auto again = submit_send(door, user("alice"), *DeviceId::parse("d2"), "c1", conversation, "hi",
                           [](const Result<SentMessage>&, bool) { FAIL() << "answered at once instead"; });
  ASSERT_TRUE(again);
  EXPECT_EQ(again->id, first.sent->id);
  EXPECT_EQ(log.total_records(), 1u);
  EXPECT_FALSE(send_refusal("c1", send_fingerprint(conversation, "hi"), *again));
  auto refused = send_refusal("c1", send_fingerprint(conversation, "other"), *again);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->code, WireCode::kInvalidArgument);
}

TEST(SendRequest, ARepeatWhileTheFirstIsAppendedGetsItsOutcome) {
  testing::FakeLog log(4);
  MemorySendDedup dedup(100, 86'400'000);
  SystemClock clock;
  SendDoor door{&log, &dedup, &clock, nullptr, nullptr};
  const auto conversation = *ConversationId::parse("d:alice:bob");
  log.hold(true);
  Outcome first, second;
  EXPECT_FALSE(submit_send(door, user("alice"), *DeviceId::parse("d1"), "c1", conversation, "hi",
                           [&](const Result<SentMessage>& s, bool dup) {
                             first = {true, s, dup};
                           }));
  EXPECT_FALSE(submit_send(door, user("alice"), *DeviceId::parse("d1"), "c1", conversation, "hi",
                           [&](const Result<SentMessage>& s, bool dup) {
                             second = {true, s, dup};
                           }));
  EXPECT_FALSE(first.called);
  EXPECT_FALSE(second.called);
  log.release();
  ASSERT_TRUE(first.called && second.called);
  ASSERT_TRUE(first.sent.ok() && second.sent.ok());
  EXPECT_EQ(first.sent->id, second.sent->id);
  EXPECT_FALSE(first.duplicate);
  EXPECT_TRUE(second.duplicate);
  EXPECT_EQ(log.total_records(), 1u);
}

}  // namespace
}  // namespace qim
