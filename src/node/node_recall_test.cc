// The MailboxNode and recalls (docs/adr/0129, 0157, 0160): the recall entry's materialisation removes the
// recalled message's text from the recipients' (and former recipients') entries before the frontier passes
// it.
#include <gtest/gtest.h>

#include "node/node_fixture.h"

namespace qim {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::kServerTimeMs;
using testing::kShards;
using testing::NodeTest;

// Decision 129: the node materialising a recall entry removes the recalled SEND's body from the
// recipients' entries (the entry stays, as a tombstone the recall entry explains); other messages keep
// theirs.
TEST_F(NodeTest, ARecallEntryRemovesTheRecalledSendsBodyFromTheMailbox) {
  dispatch(0);
  dispatch(1);
  dispatch_recall(0, 2);
  MailboxNode node(*log_, *store_, &recorder_, options());
  ASSERT_TRUE(node.start().ok());
  ASSERT_TRUE(node.drain(60s).ok());
  for (const UserId& u : {a_, b_}) {
    auto entries = mailbox(u);
    ASSERT_EQ(entries.size(), 3u);
    EXPECT_EQ(entries[0].message.id, message_id_of(0, Offset{0}));
    EXPECT_EQ(entries[0].message.body, "") << u.str();
    EXPECT_EQ(entries[1].message.body, "message 1");
    EXPECT_EQ(entries[2].message.client_msg_id, "~recall");
  }
}

// Decision 157: the recall entry names the message's applied edits, and the node removes their text from
// the recipients' ~edit entries too; each keeps its JSON with "body":"", the very bytes fanout dispatches
// for that edit read again after the recall. Another message's edit keeps its text.
TEST_F(NodeTest, ARecallEntryRemovesItsEditsTextFromTheMailbox) {
  MessageState target, other;
  target.id = message_id_of(0, Offset{0});
  other.id = message_id_of(0, Offset{1});
  dispatch(0);
  dispatch(1);
  dispatch_event(target, MessageEventKind::kEdit, "changed once", 2);
  dispatch_event(other, MessageEventKind::kEdit, "the other's edit", 3);
  dispatch_event(target, MessageEventKind::kEdit, "changed twice", 4);
  dispatch_event(target, MessageEventKind::kRecall, "", 5);
  MailboxNode node(*log_, *store_, &recorder_, options());
  ASSERT_TRUE(node.start().ok());
  ASSERT_TRUE(node.drain(60s).ok());
  for (const UserId& u : {a_, b_}) {
    auto entries = mailbox(u);
    ASSERT_EQ(entries.size(), 6u);
    EXPECT_EQ(entries[0].message.body, "") << u.str();
    EXPECT_EQ(entries[1].message.body, "message 1");
    EXPECT_EQ(entries[2].message.id, message_id_of(0, Offset{2}));
    EXPECT_EQ(entries[2].message.client_msg_id, "~edit");
    EXPECT_EQ(entries[2].message.body, event_entry_body(target, MessageEventKind::kEdit, a_, "", 2));
    EXPECT_EQ(entries[3].message.body,
              event_entry_body(other, MessageEventKind::kEdit, a_, "the other's edit", 3));
    EXPECT_EQ(entries[4].message.body, event_entry_body(target, MessageEventKind::kEdit, a_, "", 4));
    EXPECT_EQ(entries[5].message.client_msg_id, "~recall");
    for (const auto& e : entries) {
      EXPECT_EQ(e.message.body.find("changed"), std::string::npos) << u.str() << ": " << e.message.body;
    }
  }
}

// Decision 160: a member removed between the SEND and its recall gets no recall entry, but the recall's
// record of their shard names them as a former recipient, and the node removes the body from their entry
// too. Where no recipient of the recall is left in the shard, that record has no chunk at all: the node
// begins, redacts and finishes it, and writes nobody an entry.
TEST_F(NodeTest, ARecallRedactsItsFormerRecipientsEntriesAndWritesThemNone) {
  UserId elsewhere;  // a user of another shard: the only recipient of the second recall
  for (int i = 0; elsewhere.empty(); ++i) {
    UserId u = UserId::parse("other" + std::to_string(i)).value();
    if (shards_.shard_of(u).value != 0) elsewhere = u;
  }
  // The recall read at Outbox offset `at` of message `n`, to `recipients`, naming `former`: shard 0's record.
  auto dispatch_recall_to = [&](int n, uint64_t at, std::vector<UserId> recipients,
                                std::vector<UserId> former) {
    MessageState target;
    target.id = message_id_of(0, Offset{static_cast<uint64_t>(n)});
    target.events[at] =
        EventOutcome{MessageEventKind::kRecall, true, EventRefusal::kNone, a_, kServerTimeMs, ""};
    OutboxRecord r;
    r.sender = a_;
    r.conversation = ConversationId::parse("g:team").value();
    r.client_msg_id = event_entry_client_id(MessageEventKind::kRecall);
    r.server_time_ms = kServerTimeMs;
    r.body = event_entry_body(target, MessageEventKind::kRecall, a_, "", at);
    auto plan = plan_dispatches_to(r, 0, Offset{at}, shards_, 256, std::move(recipients)).value();
    EXPECT_EQ(add_former_recipients(plan, shards_, std::move(former)), 0u);
    for (const ShardDispatch& d : plan) {
      if (d.shard.value == 0) return log_->append_sync(0, "", encode_dispatch_record(d.record)).value();
    }
    ADD_FAILURE() << "no record for shard 0";
    return Offset{};
  };
  dispatch(0);
  dispatch_recall_to(0, 1, {a_}, {b_});  // b was removed before the recall
  dispatch(2);
  const Offset last = dispatch_recall_to(2, 3, {elsewhere}, {a_, b_});  // both were removed
  MailboxNode node(*log_, *store_, &recorder_, options());
  ASSERT_TRUE(node.start().ok());
  ASSERT_TRUE(node.drain(60s).ok());
  EXPECT_EQ(frontier(), compose(Epoch{1}, last).value());
  EXPECT_TRUE(quarantined().empty());
  const auto at_a = mailbox(a_);
  ASSERT_EQ(at_a.size(), 3u);
  EXPECT_EQ(at_a[0].message.body, "");
  EXPECT_EQ(at_a[1].message.client_msg_id, "~recall");
  EXPECT_EQ(at_a[2].message.id, message_id_of(0, Offset{2}));
  EXPECT_EQ(at_a[2].message.body, "") << "a former recipient of the second recall";
  const auto at_b = mailbox(b_);
  ASSERT_EQ(at_b.size(), 2u) << "b received no recall entry";
  for (const auto& e : at_b) {
    EXPECT_EQ(e.message.client_msg_id.front(), 'c') << e.message.client_msg_id;
    EXPECT_EQ(e.message.body, "") << e.message.client_msg_id;
  }
}

// The recall's finish waits for its redaction: while the redaction fails the frontier stays below the
// recall (so a process killed now replays it), and once it succeeds no body is left.
TEST_F(NodeTest, TheFrontierPassesARecallOnlyOnceItsRedactionSucceeded) {
  testing::FlakyStore flaky(*store_);
  flaky.fail_redact = 1'000'000;
  MailboxNode node(*log_, flaky, &recorder_, options());
  ASSERT_TRUE(node.start().ok());
  dispatch(0);
  const Offset recall = dispatch_recall(0, 1);
  ASSERT_TRUE(eventually([&] { return flaky.redact_calls.load() >= 3; }));
  EXPECT_LT(frontier(), compose(Epoch{1}, recall).value());
  flaky.fail_redact = 0;
  ASSERT_TRUE(node.drain(60s).ok());
  EXPECT_EQ(frontier(), compose(Epoch{1}, recall).value());
  EXPECT_EQ(mailbox(b_).at(0).message.body, "");
}

}  // namespace
}  // namespace qim
