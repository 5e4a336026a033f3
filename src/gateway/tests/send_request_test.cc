// SEND as a callable function (send_request.h): what the WebSocket frame and the server API both call.
#include "gateway/send_request.h"

#include <gtest/gtest.h>

#include "gateway/tests/fake_log.h"
#include "outbox/outbox_record.h"

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
  auto at_once = submit_send(door, user("alice"), *DeviceId::parse("d1"), "c1", conversation, "hi", {},
                             [&](const Result<SentMessage>& s, bool dup) {
                               first = {true, s, dup};
                             });
  EXPECT_FALSE(at_once);
  ASSERT_TRUE(first.called);  // the fake log completes at once
  ASSERT_TRUE(first.sent.ok());
  EXPECT_FALSE(first.duplicate);
  EXPECT_EQ(started, 1);
  EXPECT_EQ(finished, 1);
  auto again = submit_send(door, user("alice"), *DeviceId::parse("d2"), "c1", conversation, "hi", {},
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
  EXPECT_FALSE(submit_send(door, user("alice"), *DeviceId::parse("d1"), "c1", conversation, "hi", {},
                           [&](const Result<SentMessage>& s, bool dup) {
                             first = {true, s, dup};
                           }));
  EXPECT_FALSE(submit_send(door, user("alice"), *DeviceId::parse("d1"), "c1", conversation, "hi", {},
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

// A hook answering from a script, at once: the verdict each call gets, and what it was asked.
class ScriptedHook final : public BeforeSendHook {
 public:
  std::function<Result<std::string>(const BeforeSendCall&)> answer;
  std::vector<BeforeSendCall> asked;
  void check(BeforeSendCall call, BeforeSendDone done) override {
    asked.push_back(call);
    done(answer(call));
  }
  void stop() override {}
  std::chrono::milliseconds bound() const override { return std::chrono::milliseconds(1); }
};

struct HookedDoor {
  testing::FakeLog log{4};
  MemorySendDedup dedup{100, 86'400'000};
  SystemClock clock;
  ScriptedHook hook;
  int started = 0, finished = 0;
  SendDoor door() {
    return SendDoor{&log, &dedup, &clock, [this] { ++started; }, [this] { ++finished; }, &hook};
  }
  Outcome send(const char* id, const char* body) {
    Outcome out;
    auto at_once =
        submit_send(door(), user("alice"), *DeviceId::parse("d1"), id, *ConversationId::parse("d:alice:bob"),
                    body, {}, [&](const Result<SentMessage>& s, bool dup) {
                      out = {true, s, dup};
                    });
    if (at_once) out = {true, *at_once, true};
    return out;
  }
  std::string appended_body(size_t i) {
    auto records = log.all_records();
    return decode_outbox_record(records.at(i).value)->body;
  }
};

TEST(SendRequest, TheBeforeSendHookAllowsRejectsOrReplaces) {
  HookedDoor d;
  d.hook.answer = [](const BeforeSendCall& c) -> Result<std::string> {
    if (c.body == "spam") return Error(kBeforeSendRejected, "no spam here");
    if (c.body == "darn") return std::string("d**n");
    return c.body;
  };
  Outcome allowed = d.send("c1", "hello");
  ASSERT_TRUE(allowed.called && allowed.sent.ok());
  Outcome rejected = d.send("c2", "spam");
  ASSERT_TRUE(rejected.called);
  ASSERT_FALSE(rejected.sent.ok());
  EXPECT_EQ(send_error_code(rejected.sent.error()), WireCode::kRejected);
  EXPECT_EQ(rejected.sent.error().message(), "no spam here");
  Outcome replaced = d.send("c3", "darn");
  ASSERT_TRUE(replaced.called && replaced.sent.ok());
  ASSERT_EQ(d.log.total_records(), 2u);  // the rejected one was not appended
  EXPECT_EQ(d.appended_body(0), "hello");
  EXPECT_EQ(d.appended_body(1), "d**n");
  // What the hook was asked: the SEND as it came.
  ASSERT_EQ(d.hook.asked.size(), 3u);
  EXPECT_EQ(d.hook.asked[1].client_msg_id, "c2");
  EXPECT_EQ(d.hook.asked[1].sender.str(), "alice");
  EXPECT_EQ(d.hook.asked[1].conversation.str(), "d:alice:bob");
  // Every SEND counted in flight once and answered once, refused or appended.
  EXPECT_EQ(d.started, 3);
  EXPECT_EQ(d.finished, 3);
  // A retry of the replaced one is the same message (the fingerprint is the sent body's), without asking.
  Outcome again = d.send("c3", "darn");
  ASSERT_TRUE(again.sent.ok());
  EXPECT_EQ(again.sent->id, replaced.sent->id);
  EXPECT_FALSE(
      send_refusal("c3", send_fingerprint(*ConversationId::parse("d:alice:bob"), "darn"), *again.sent));
  EXPECT_EQ(d.hook.asked.size(), 3u);
  // The rejected key is free again: a retry asks the hook anew.
  d.hook.answer = [](const BeforeSendCall& c) -> Result<std::string> { return c.body; };
  Outcome retried = d.send("c2", "spam");
  ASSERT_TRUE(retried.sent.ok());
  EXPECT_EQ(d.log.total_records(), 3u);
}

TEST(SendRequest, AHookThatRefusesForItsOwnReasonsIsTheSendsError) {
  HookedDoor d;
  d.hook.answer = [](const BeforeSendCall&) -> Result<std::string> {
    return Error(Errc::kResourceExhausted, "queue full");
  };
  Outcome full = d.send("c1", "hello");
  ASSERT_FALSE(full.sent.ok());
  EXPECT_EQ(send_error_code(full.sent.error()), WireCode::kRateLimited);
  d.hook.answer = [](const BeforeSendCall&) -> Result<std::string> { return Error(Errc::kTimeout, "slow"); };
  Outcome closed = d.send("c1", "hello");
  ASSERT_FALSE(closed.sent.ok());
  EXPECT_EQ(send_error_code(closed.sent.error()), WireCode::kUnavailable);
  EXPECT_EQ(d.log.total_records(), 0u);
}

// reply_to (docs/adr/0125): a chat message of the same conversation, read from the Outbox; anything else
// UNKNOWN_MESSAGE. A reply and a plain SEND of the same body are different content for the same key.
TEST(SendRequest, ReplyToIsCheckedAgainstTheOutbox) {
  testing::FakeLog log(1);  // one partition: every conversation's records side by side
  MemorySendDedup dedup(100, 86'400'000);
  SystemClock clock;
  SendDoor door{&log, &dedup, &clock, nullptr, nullptr};
  const auto ab = *ConversationId::parse("d:alice:bob");
  const auto ac = *ConversationId::parse("d:alice:carol");
  auto send = [&](const char* id, const ConversationId& c, MessageId reply_to) {
    Outcome out;
    submit_send(door, user("alice"), *DeviceId::parse("d1"), id, c, "hi", reply_to,
                [&](const Result<SentMessage>& s, bool dup) {
                  out = {true, s, dup};
                });
    return out;
  };
  Outcome first = send("c1", ab, {});
  Outcome other = send("c2", ac, {});
  ASSERT_TRUE(first.sent.ok() && other.sent.ok());
  EXPECT_FALSE(check_reply_target(log, ab, first.sent->id));
  // Another conversation's message, an id past the end, an event: no message of this conversation.
  auto foreign = check_reply_target(log, ab, other.sent->id);
  ASSERT_TRUE(foreign);
  EXPECT_EQ(foreign->code, WireCode::kUnknownMessage);
  auto past = check_reply_target(log, ab, MessageId{first.sent->id.value + 100});
  ASSERT_TRUE(past);
  EXPECT_EQ(past->code, WireCode::kUnknownMessage);
  OutboxRecord recall{ab,
                      user("alice"),
                      DeviceId{},
                      "c3",
                      1,
                      "",
                      std::nullopt,
                      MessageEvent{MessageEventKind::kRecall, first.sent->id}};
  log.append(0, ab.str(), encode_outbox_record(recall), [](Result<Offset>) {});
  ASSERT_EQ(log.total_records(), 3u);
  auto event = check_reply_target(log, ab, MessageId{2});
  ASSERT_TRUE(event);
  EXPECT_EQ(event->code, WireCode::kUnknownMessage);
  // The reply is appended with reply_to, its fingerprint not a plain SEND's.
  Outcome reply = send("c4", ab, first.sent->id);
  ASSERT_TRUE(reply.sent.ok());
  auto stored = decode_outbox_record(log.all_records().back().value);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->reply_to, first.sent->id);
  EXPECT_FALSE(is_read_receipt(*stored)) << "a reply is a message, not a read receipt";
  EXPECT_NE(send_fingerprint(ab, "hi", first.sent->id), send_fingerprint(ab, "hi"));
  EXPECT_EQ(send_fingerprint(ab, "hi", std::nullopt), send_fingerprint(ab, "hi"));
  EXPECT_NE(send_fingerprint(ab, "hi", MessageId{0}), send_fingerprint(ab, "hi"));  // id 0 is a message
  EXPECT_TRUE(send_refusal("c4", send_fingerprint(ab, "hi"), *reply.sent));
  EXPECT_FALSE(send_refusal("c4", send_fingerprint(ab, "hi", first.sent->id), *reply.sent));
}

TEST(BeforeSendVerdict, TheHooksAnswers) {
  EXPECT_EQ(*before_send_verdict("", "b", 10), "b");
  EXPECT_EQ(*before_send_verdict(R"({"action":"allow"})", "b", 10), "b");
  auto reject = before_send_verdict(R"({"action":"reject","reason":"spam"})", "b", 10);
  ASSERT_FALSE(reject.ok());
  EXPECT_EQ(reject.code(), kBeforeSendRejected);
  EXPECT_EQ(reject.error().message(), "spam");
  EXPECT_EQ(*before_send_verdict(R"({"action":"replace","body":"new"})", "b", 10), "new");
  // Answers that are the hook's failure (the policy decides): a replacement that is no valid SEND body, an
  // unknown action, no JSON.
  EXPECT_EQ(before_send_verdict(R"({"action":"replace","body":""})", "b", 10).code(), Errc::kInvalidArgument);
  EXPECT_EQ(before_send_verdict(R"({"action":"replace","body":"01234567890"})", "b", 10).code(),
            Errc::kInvalidArgument);
  EXPECT_EQ(before_send_verdict(R"({"action":"maybe"})", "b", 10).code(), Errc::kInvalidArgument);
  EXPECT_EQ(before_send_verdict("ok", "b", 10).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace qim
