// The rules of EDIT and RECALL (lifecycle/message_state.h), the state's encoding, the stores, and the
// Outbox record's version 3.

#include <gtest/gtest.h>

#include <filesystem>

#include "lifecycle/message_state.h"
#include "lifecycle/message_state_store.h"
#include "lifecycle/tests/message_state_store_contract.h"
#include "outbox/outbox_record.h"

namespace qim {
namespace {

constexpr int64_t kHour = 3600 * 1000;

MessageState sent(const char* sender = "alice", int64_t at = 1'000'000) {
  MessageState s;
  s.id = MessageId{(uint64_t{1} << 48) | 10};
  s.conversation = ConversationId::parse("d:alice:bob").value();
  s.sender = UserId::parse(sender).value();
  s.client_msg_id = "c1";
  s.sent_at_ms = at;
  return s;
}

EventRequest request(MessageEventKind kind, const char* actor, int64_t at, uint64_t offset) {
  EventRequest r;
  r.event = MessageEvent{kind, MessageId{(uint64_t{1} << 48) | 10}};
  r.conversation = ConversationId::parse("d:alice:bob").value();
  r.actor = UserId::parse(actor).value();
  r.at_ms = at;
  r.offset = offset;
  return r;
}

TEST(MessageRules, EditBySenderWithinWindowApplies) {
  MessageState s = sent();
  EventOutcome o = decide_event(&s, request(MessageEventKind::kEdit, "alice", 1'000'000 + kHour, 20), {});
  EXPECT_TRUE(o.applied);
  EXPECT_EQ(o.refusal, EventRefusal::kNone);
}

TEST(MessageRules, EditRefusals) {
  MessageState s = sent();
  LifecyclePolicy policy;
  EXPECT_EQ(decide_event(nullptr, request(MessageEventKind::kEdit, "alice", 1, 20), policy).refusal,
            EventRefusal::kUnknownMessage);
  EXPECT_EQ(decide_event(&s, request(MessageEventKind::kEdit, "bob", 1'000'001, 20), policy).refusal,
            EventRefusal::kNotAllowed);
  EXPECT_EQ(
      decide_event(&s, request(MessageEventKind::kEdit, "alice", 1'000'000 + 49 * kHour, 20), policy).refusal,
      EventRefusal::kPastWindow);
  policy.edit_window_ms = 0;  // edits off
  EXPECT_EQ(decide_event(&s, request(MessageEventKind::kEdit, "alice", 1'000'001, 20), policy).refusal,
            EventRefusal::kPastWindow);
  EventRequest other = request(MessageEventKind::kEdit, "alice", 1'000'001, 20);
  other.conversation = ConversationId::parse("d:alice:carol").value();
  EXPECT_EQ(decide_event(&s, other, {}).refusal, EventRefusal::kOtherConversation);
}

TEST(MessageRules, RecallWindowAndModerators) {
  MessageState s = sent();
  EXPECT_TRUE(
      decide_event(&s, request(MessageEventKind::kRecall, "alice", 1'000'000 + 23 * kHour, 20), {}).applied);
  EXPECT_EQ(
      decide_event(&s, request(MessageEventKind::kRecall, "alice", 1'000'000 + 25 * kHour, 20), {}).refusal,
      EventRefusal::kPastWindow);
  EXPECT_EQ(decide_event(&s, request(MessageEventKind::kRecall, "bob", 1'000'001, 20), {}).refusal,
            EventRefusal::kNotAllowed);
  EventRequest admin = request(MessageEventKind::kRecall, "bob", 1'000'000 + 1000 * kHour, 20);
  admin.actor_moderates = true;  // a group's owner or admin: any time, anyone's message
  EXPECT_TRUE(decide_event(&s, admin, {}).applied);
}

TEST(MessageRules, NothingAfterARecallAndOnlyEarlierEventsCount) {
  MessageState s = sent();
  s.events[30] = decide_event(&s, request(MessageEventKind::kRecall, "alice", 1'000'100, 30), {});
  ASSERT_TRUE(s.events[30].applied);
  EXPECT_EQ(decide_event(&s, request(MessageEventKind::kEdit, "alice", 1'000'200, 40), {}).refusal,
            EventRefusal::kRecalled);
  EXPECT_EQ(decide_event(&s, request(MessageEventKind::kRecall, "alice", 1'000'200, 40), {}).refusal,
            EventRefusal::kRecalled);
  // An edit read at 20, before the recall at 30, decides as it did the first time (a replay).
  EXPECT_TRUE(decide_event(&s, request(MessageEventKind::kEdit, "alice", 1'000'050, 20), {}).applied);
}

TEST(MessageRules, EditCountAndCurrentEdit) {
  MessageState s = sent();
  s.events[20] = decide_event(&s, request(MessageEventKind::kEdit, "alice", 1'000'100, 20), {});
  s.events[25] = decide_event(&s, request(MessageEventKind::kEdit, "bob", 1'000'150, 25), {});  // refused
  s.events[30] = decide_event(&s, request(MessageEventKind::kEdit, "alice", 1'000'200, 30), {});
  EXPECT_EQ(s.edit_count(), 2u);
  EXPECT_EQ(s.edit_count(25), 1u);
  EXPECT_EQ(s.edited_at_ms(), 1'000'200);
  EXPECT_EQ(s.last_edit_offset(), 30u);
  EXPECT_FALSE(s.recalled());
}

TEST(MessageStateCodec, RoundTripsAndRefusesGarbage) {
  MessageState s = sent();
  s.events[20] = decide_event(&s, request(MessageEventKind::kEdit, "alice", 1'000'100, 20), {});
  s.events[21] = decide_event(&s, request(MessageEventKind::kRecall, "bob", 1'000'100, 21), {});
  auto back = decode_message_state(encode_message_state(s));
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(*back, s);
  EXPECT_EQ(decode_message_state("\x07").code(), Errc::kCorruptEntry);
  std::string trailing = encode_message_state(s) + "x";
  EXPECT_EQ(decode_message_state(trailing).code(), Errc::kCorruptEntry);
}

TEST(MessageEntry, BodiesAreJson) {
  MessageState s = sent();
  s.events[20] = decide_event(&s, request(MessageEventKind::kEdit, "alice", 1'000'100, 20), {});
  EXPECT_EQ(event_entry_body(s, MessageEventKind::kEdit, s.sender, "he said \"hi\""),
            "{\"event\":\"edit\",\"message_id\":\"281474976710666\",\"body\":\"he said \\\"hi\\\"\","
            "\"edited_at\":1000100,\"edit_count\":1}");
  // As of an offset before the edit: a recall of an unedited message names no edits (bytes as before).
  EXPECT_EQ(event_entry_body(s, MessageEventKind::kRecall, s.sender, "", 15),
            "{\"event\":\"recall\",\"message_id\":\"281474976710666\",\"by\":\"alice\"}");
  EXPECT_EQ(event_entry_client_id(MessageEventKind::kRecall), "~recall");
}

// Decision 157: a recall names the applied edits before it by the message ids their ~edit entries were
// dispatched under (partition 1: 1 << 48 | offset), so the mailbox side can remove their text; a refused
// edit, and anything at or after the recall's offset, is not named, so a replay names the same.
TEST(MessageEntry, ARecallNamesTheAppliedEditsBeforeIt) {
  MessageState s = sent();
  s.events[20] = decide_event(&s, request(MessageEventKind::kEdit, "alice", 1'000'100, 20), {});
  s.events[21] = decide_event(&s, request(MessageEventKind::kEdit, "bob", 1'000'100, 21), {});  // refused
  s.events[22] = decide_event(&s, request(MessageEventKind::kEdit, "alice", 1'000'200, 22), {});
  s.events[23] = decide_event(&s, request(MessageEventKind::kRecall, "alice", 1'000'300, 23), {});
  ASSERT_FALSE(s.events[21].applied);
  const std::string expected =
      "{\"event\":\"recall\",\"message_id\":\"281474976710666\",\"by\":\"alice\","
      "\"edits\":[\"281474976710676\",\"281474976710678\"]}";
  EXPECT_EQ(event_entry_body(s, MessageEventKind::kRecall, s.sender, "", 23), expected);
  s.events[24] = decide_event(&s, request(MessageEventKind::kEdit, "alice", 1'000'400, 24), {});  // refused
  s.events[30] = EventOutcome{MessageEventKind::kEdit, true, EventRefusal::kNone, s.sender, 1'000'500, ""};
  EXPECT_EQ(event_entry_body(s, MessageEventKind::kRecall, s.sender, "", 23), expected);  // a replay
}

// A recall names at most the last kMaxRecallNamedEdits edits: its entry stays a valid message body.
TEST(MessageEntry, ARecallNamesAtMostTheLastEditsItsBodyCanHold) {
  MessageState s = sent();
  const uint64_t n = kMaxRecallNamedEdits + 50;
  for (uint64_t i = 0; i < n; ++i) {
    s.events[20 + i] =
        EventOutcome{MessageEventKind::kEdit, true, EventRefusal::kNone, s.sender, 1'000'100, ""};
  }
  const std::string body = event_entry_body(s, MessageEventKind::kRecall, s.sender, "", 20 + n);
  EXPECT_LT(body.size(), kMaxBodyBytes);
  EXPECT_EQ(body.find("\"" + std::to_string((uint64_t{1} << 48) | (20 + 49)) + "\""), std::string::npos);
  EXPECT_NE(body.find("\"edits\":[\"" + std::to_string((uint64_t{1} << 48) | (20 + 50)) + "\","),
            std::string::npos);
  EXPECT_TRUE(body.ends_with(",\"" + std::to_string((uint64_t{1} << 48) | (20 + n - 1)) + "\"]}"));
}

TEST(OutboxRecordV3, EventRoundTripsAndOlderVersionsStillDecode) {
  OutboxRecord plain{ConversationId::parse("d:alice:bob").value(),
                     UserId::parse("alice").value(),
                     DeviceId{},
                     "c1",
                     5,
                     "hello"};
  std::string v1 = encode_outbox_record(plain);
  EXPECT_EQ(static_cast<uint8_t>(v1[0]), 1);  // a plain SEND keeps its bytes
  OutboxRecord edit = plain;
  edit.client_msg_id = "c2";
  edit.body = "hello!";
  edit.event = MessageEvent{MessageEventKind::kEdit, MessageId{42}};
  std::string v3 = encode_outbox_record(edit);
  EXPECT_EQ(static_cast<uint8_t>(v3[0]), 3);
  auto back = decode_outbox_record(v3);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(*back, edit);
  auto old = decode_outbox_record(v1);
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(old->event);
  v3[v3.size() - 9] = 9;  // an unknown event kind
  EXPECT_EQ(decode_outbox_record(v3).code(), Errc::kCorruptEntry);
}

TEST(MessageStateStoreContract, Memory) {
  auto store = make_memory_message_state_store();
  run_message_state_store_contract(*store);
}

TEST(MessageStateStoreContract, Rocks) {
  const auto dir = std::filesystem::temp_directory_path() / ("qim-msgstate-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  {
    auto store = open_rocks_message_state_store(dir.string());
    ASSERT_TRUE(store.ok()) << store.error().to_string();
    run_message_state_store_contract(**store);
  }
  {
    auto again = open_rocks_message_state_store(dir.string());  // durable across a reopen
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*(*again)->watermark(1), 41u);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace qim
