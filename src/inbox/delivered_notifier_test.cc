// DELIVERED means "the recipient's mailbox holds it" (issue 38 item 4): told to the sender for entries a
// move made visible in a recipient's mailbox of a direct conversation, never for the sender's own copy.
#include "inbox/delivered_notifier.h"

#include <gtest/gtest.h>

#include <mutex>
#include <vector>

namespace qim {
namespace {

struct Sent {
  std::vector<std::string> users;
  std::string frame;
  uint64_t except = 0;
};

class FakeSignalBus final : public SignalBus {
 public:
  void send(std::span<const UserId> users, std::string frame, uint64_t except_connection) override {
    std::lock_guard lock(mu);
    Sent s{{}, std::move(frame), except_connection};
    for (const auto& u : users) s.users.push_back(u.str());
    sent.push_back(std::move(s));
  }
  std::mutex mu;
  std::vector<Sent> sent;
};

class CountingNotifier final : public DeliveryNotifier {
 public:
  void entries_visible(ShardId, MailboxSeq, MailboxSeq, std::span<const MailboxEntry> e) override {
    entries += e.size();
  }
  void range_unknown(ShardId, MailboxSeq, MailboxSeq) override { ++unknown; }
  size_t entries = 0;
  int unknown = 0;
};

MailboxEntry entry(std::string_view user, uint64_t seq, std::string_view sender,
                   std::string_view conversation, uint64_t id, std::string client_msg_id = "c") {
  MailboxEntry e;
  e.user = *UserId::parse(user);
  e.seq = MailboxSeq::from_raw(seq);
  e.message.id = MessageId{id};
  e.message.conversation = *ConversationId::parse(conversation);
  e.message.sender = *UserId::parse(sender);
  e.message.client_msg_id = std::move(client_msg_id);
  e.message.body = "x";
  return e;
}

TEST(DeliveredNotifier, TellsTheSenderTheLatestMessageInTheRecipientsMailbox) {
  FakeSignalBus bus;
  CountingNotifier inner;
  DeliveredNotifier n(bus, &inner);
  const std::vector<MailboxEntry> move{
      entry("bob", 1, "alice", "d:alice:bob", 10),    // bob's mailbox holds alice's message 10
      entry("alice", 2, "alice", "d:alice:bob", 10),  // alice's own copy: says nothing of bob
      entry("bob", 3, "alice", "d:alice:bob", 12),    // and 12: one DELIVERED naming 12
      entry("carol", 4, "bob", "d:bob:carol", 11),
      entry("dave", 5, "erin", "g:team", 13),                   // a group: RECEIPTS, not DELIVERED
      entry("bob", 6, "carol", "d:bob:carol", 14, "~group:x"),  // a system entry
  };
  n.entries_visible(ShardId{0}, MailboxSeq::from_raw(0), MailboxSeq::from_raw(6), move);
  ASSERT_EQ(bus.sent.size(), 2u);
  EXPECT_EQ(bus.sent[0].users, std::vector<std::string>{"alice"});
  EXPECT_EQ(bus.sent[0].frame,
            R"({"type":"DELIVERED","conversation":"d:alice:bob","user":"bob","message_id":"12"})");
  EXPECT_EQ(bus.sent[1].users, std::vector<std::string>{"bob"});
  EXPECT_EQ(bus.sent[1].frame,
            R"({"type":"DELIVERED","conversation":"d:bob:carol","user":"carol","message_id":"11"})");
  EXPECT_EQ(n.sent(), 2u);
  EXPECT_EQ(inner.entries, move.size());  // handed on unchanged
}

TEST(DeliveredNotifier, TheSendersOwnCopyAloneTellsNothing) {
  FakeSignalBus bus;
  DeliveredNotifier n(bus);
  const std::vector<MailboxEntry> move{entry("alice", 1, "alice", "d:alice:bobb", 10)};
  n.entries_visible(ShardId{0}, MailboxSeq::from_raw(0), MailboxSeq::from_raw(1), move);
  n.range_unknown(ShardId{0}, MailboxSeq::from_raw(1), MailboxSeq::from_raw(9));
  EXPECT_TRUE(bus.sent.empty());
}

TEST(DeliveredNotifier, BoundedPerMove) {
  FakeSignalBus bus;
  CountingNotifier inner;
  DeliveredNotifier n(bus, &inner, 2);
  std::vector<MailboxEntry> move;
  for (int i = 0; i < 5; ++i)
    move.push_back(entry("bob", i + 1, "u" + std::to_string(i), "d:bob:u" + std::to_string(i), 10 + i));
  n.entries_visible(ShardId{0}, MailboxSeq::from_raw(0), MailboxSeq::from_raw(5), move);
  n.range_unknown(ShardId{0}, MailboxSeq::from_raw(5), MailboxSeq::from_raw(6));
  EXPECT_EQ(bus.sent.size(), 2u);
  EXPECT_EQ(n.dropped(), 3u);
  EXPECT_EQ(inner.unknown, 1);
  EXPECT_NE(n.metrics_text().find("qim_delivered_signals_dropped_total 3"), std::string::npos);
}

}  // namespace
}  // namespace qim
