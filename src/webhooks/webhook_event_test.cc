#include "webhooks/webhook_event.h"

#include <gtest/gtest.h>

#include "core/conversation.h"

namespace qim {
namespace {

OutboxRecord message(const std::string& body) {
  OutboxRecord r;
  r.sender = UserId::parse("alice").value();
  r.sender_device = DeviceId::parse("d1").value();
  r.conversation = direct_conversation(r.sender, UserId::parse("bob").value()).value();
  r.client_msg_id = "c1";
  r.server_time_ms = 1'700'000'000'000;
  r.body = body;
  return r;
}

TEST(WebhookEvent, AMessageIsMessageCreatedWithAnIdFromItsOutboxPosition) {
  auto events = webhook_events_of(message("hi \"there\""), 3, Offset{42}, {});
  ASSERT_EQ(events.size(), 1u);
  const auto& e = events[0];
  const uint64_t id = (uint64_t{3} << 48) | 42;
  EXPECT_EQ(e.id, "evt_" + std::to_string(id) + "_0");
  EXPECT_EQ(e.type, "message.created");
  EXPECT_EQ(e.body,
            R"({"version":1,"id":"evt_)" + std::to_string(id) +
                R"(_0","type":"message.created","time":1700000000000,"conversation":"d:alice:bob",)"
                R"("position":{"partition":3,"offset":"42"},"data":{"message_id":")" +
                std::to_string(id) +
                R"(","sender":"alice","sender_device":"d1","client_msg_id":"c1","body":"hi \"there\""}})");
  // The same record read again is the same event (a resend carries the same webhook-id and body).
  EXPECT_EQ(webhook_events_of(message("hi \"there\""), 3, Offset{42}, {})[0].body, e.body);
}

TEST(WebhookEvent, AGroupOpIsAMembershipEventOnlyWhenApplied) {
  OutboxRecord r = message("{}");
  r.conversation = ConversationId::parse("g:team1").value();
  r.group_op = GroupOp{GroupOpKind::kAdd, {UserId::parse("carol").value(), UserId::parse("dave").value()}};
  r.client_msg_id = "~group:add";
  auto events = webhook_events_of(r, 0, Offset{7}, {});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, "group.member_added");
  EXPECT_NE(events[0].body.find(R"("group":"team1","actor":"alice")"), std::string::npos) << events[0].body;
  EXPECT_NE(events[0].body.find(R"("members":["carol","dave"])"), std::string::npos) << events[0].body;
  EXPECT_TRUE(webhook_events_of(r, 0, Offset{7}, RecordFate{false}).empty());
  r.group_op->kind = GroupOpKind::kRemove;
  EXPECT_EQ(webhook_events_of(r, 0, Offset{7}, {})[0].type, "group.member_removed");
}

// A read receipt (docs/adr/0147) is message.read: who read, on which device, through which message; its id
// from its own Outbox position, so it sorts with the conversation's messages.
TEST(WebhookEvent, AReadReceiptIsMessageReadAndAReactionIsNoEvent) {
  OutboxRecord r = message("");
  r.client_msg_id.clear();
  r.sender = UserId::parse("bob").value();
  r.sender_device = DeviceId::parse("phone").value();
  r.read_through = MessageId{(uint64_t{3} << 48) | 42};
  auto events = webhook_events_of(r, 3, Offset{43}, {});
  ASSERT_EQ(events.size(), 1u);
  const uint64_t id = (uint64_t{3} << 48) | 43;
  EXPECT_EQ(events[0].id, "evt_" + std::to_string(id) + "_0");
  EXPECT_EQ(events[0].type, "message.read");
  EXPECT_EQ(events[0].body,
            R"({"version":1,"id":"evt_)" + std::to_string(id) +
                R"(_0","type":"message.read","time":1700000000000,"conversation":"d:alice:bob",)"
                R"("position":{"partition":3,"offset":"43"},"data":{"reader":"bob","reader_device":"phone",)"
                R"("read_through":")" +
                std::to_string((uint64_t{3} << 48) | 42) + R"("}})");
  // A former member's receipt in a group (fanout's fate: not delivered) is no event.
  EXPECT_TRUE(webhook_events_of(r, 3, Offset{43}, RecordFate{false}).empty());

  OutboxRecord react = message("👍");
  react.event = MessageEvent{MessageEventKind::kReact, MessageId{(uint64_t{3} << 48) | 42}};
  EXPECT_TRUE(webhook_events_of(react, 3, Offset{44}, {}).empty()) << "a reaction is not a recall";
  react.event->kind = MessageEventKind::kRecall;
  EXPECT_EQ(webhook_events_of(react, 3, Offset{44}, {})[0].type, "message.recalled");
}

}  // namespace
}  // namespace qim
