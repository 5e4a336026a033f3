// The rules of Inbox (inbox.h) and the sink of ContractStore (mailbox/entry_sink.h), on every backend,
// with entries delivered through a real ContractStore.
#include "inbox/tests/forwarding_inbox.h"
#include "inbox/tests/inbox_suite.h"

namespace qim::test {
namespace {

class InboxRulesTest : public InboxSuite {
 protected:
  std::pair<uint32_t, bool> unread(const UserId& u, const ConversationId& c) {
    auto n = session_->inbox().unread(u, c);
    EXPECT_TRUE(is_ok(n));
    return n.ok() ? *n : std::pair<uint32_t, bool>{};
  }
};

// Item 2 of issue 38: a failed sink fails write_chunks, the frontier cannot pass the record, and the retry
// writes both the entries and the inbox rows.
TEST_P(InboxRulesTest, FailedSinkLeavesTheFrontierAndTheRetryWritesBoth) {
  const ConversationId c = direct(alice_, bob_);
  records_.push_back(inbox_record(inbox_message(1, c, bob_, clock_->now_ms()), {alice_, bob_}));
  const DispatchRecord& r = records_.back();
  session_->sink().fail_next(1, true);
  auto begun = session_->store().begin_dispatch(kInboxShard, epoch_, r.identity, Offset{1});
  ASSERT_TRUE(is_ok(begun));
  auto written = session_->store().write_chunks(kInboxShard, epoch_, chunk_writes(r));
  EXPECT_TRUE(fails_with(written, Errc::kTransport));
  auto finished = session_->store().finish_dispatch(kInboxShard, epoch_, r.identity.id,
                                                    uniform_advances({}, seq_of(1, 1)));
  EXPECT_TRUE(fails_with(finished, Errc::kIncomplete))
      << "the frontier must not pass a record without its rows";
  auto frontier = frontier_of(session_->store(), kInboxShard, epoch_);
  ASSERT_TRUE(is_ok(frontier));
  EXPECT_TRUE(frontier->is_zero());
  auto page = session_->inbox().conversations(alice_, std::nullopt, 10);
  ASSERT_TRUE(is_ok(page));
  EXPECT_TRUE(page->items.empty()) << "nothing is visible before the frontier";

  // The retry (the worker begins the record again) writes entries and rows; the frontier then passes it.
  uint64_t offset = 1;
  auto done = deliver(session_->store(), epoch_, std::span(&r, 1), offset);
  ASSERT_TRUE(is_ok(done));
  EXPECT_EQ(*done, seq_of(1, 1));
  EXPECT_EQ(unread(alice_, c), std::make_pair(1u, false));
  auto rows = session_->backend().conversation_rows(bob_);
  ASSERT_TRUE(is_ok(rows));
  EXPECT_EQ(rows->size(), 1u) << "the half the failed call wrote and the retry's agree";
}

TEST_P(InboxRulesTest, VisibilityHasEveryEpochsFrontierAndTheTrim) {
  const ConversationId c = direct(alice_, bob_);
  auto empty = session_->store().visibility(alice_);
  ASSERT_TRUE(is_ok(empty));
  EXPECT_TRUE(empty->frontiers.empty());
  EXPECT_FALSE(empty->visible(seq_of(1, 1)));
  send(c, bob_, {alice_, bob_});
  ASSERT_TRUE(is_ok(session_->restart()));
  epoch_ = Epoch{2};
  send(c, bob_, {alice_, bob_});
  auto vis = session_->store().visibility(alice_);
  ASSERT_TRUE(is_ok(vis));
  EXPECT_EQ(vis->frontiers, (std::vector<MailboxSeq>{seq_of(1, 1), seq_of(2, 2)}));
  EXPECT_TRUE(vis->trim.is_zero());
  EXPECT_TRUE(vis->visible(seq_of(1, 1)));
  EXPECT_FALSE(vis->visible(seq_of(1, 2))) << "above its own epoch's frontier";
  EXPECT_TRUE(vis->visible(seq_of(2, 2)));
  EXPECT_FALSE(vis->visible(seq_of(3, 1))) << "an epoch without a frontier shows nothing";
  EXPECT_TRUE(fails_with(session_->store().visibility(UserId{}), Errc::kInvalidArgument));
}

TEST_P(InboxRulesTest, UnreadCountsOthersMessagesAndNotSystemEntries) {
  const ConversationId c = direct(alice_, bob_);
  const ConversationId g = group("team");
  send(c, bob_, {alice_, bob_});
  send(c, bob_, {alice_, bob_});
  send(c, alice_, {alice_, bob_});
  send(g, carol_, {alice_, bob_, carol_}, /*system=*/true);
  EXPECT_EQ(unread(alice_, c), std::make_pair(2u, false));
  EXPECT_EQ(unread(bob_, c), std::make_pair(1u, false));
  EXPECT_EQ(unread(alice_, g), std::make_pair(0u, false)) << "a system entry never counts";
  auto page = session_->inbox().conversations(alice_, std::nullopt, 10);
  ASSERT_TRUE(is_ok(page));
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_EQ(page->items[0].conversation, g) << "a system entry is activity";
  EXPECT_EQ(page->items[1].conversation, c);
  EXPECT_EQ(page->items[1].last.sender, alice_);
  EXPECT_EQ(page->items[1].unread, 2u);
  EXPECT_EQ(page->unread_conversations, 1u);
  EXPECT_FALSE(page->next_before);
}

TEST_P(InboxRulesTest, EntriesAboveTheFrontierAreNotShownNorCounted) {
  const ConversationId c = direct(alice_, bob_);
  const MailboxSeq first = send(c, bob_, {alice_, bob_});
  records_.push_back(inbox_record(inbox_message(next_id_++, c, bob_, clock_->now_ms()), {alice_, bob_}));
  ASSERT_TRUE(is_ok(write_only(session_->store(), epoch_, std::span(&records_.back(), 1), next_offset_)));
  EXPECT_EQ(unread(alice_, c), std::make_pair(1u, false));
  auto page = session_->inbox().conversations(alice_, std::nullopt, 10);
  ASSERT_TRUE(is_ok(page));
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].last.seq, first) << "the row above the frontier falls back to the visible entry";
  auto read = session_->inbox().mark_read(alice_, c, seq_of(1, 1000));
  ASSERT_TRUE(is_ok(read));
  EXPECT_EQ(read->read_seq, first) << "a READ is clamped to the last visible entry";

  // A new owner at the next epoch takes over; the old epoch's entry above its frontier stays hidden and the
  // new owner's copy is the one shown.
  ASSERT_TRUE(is_ok(session_->restart()));
  epoch_ = Epoch{2};
  uint64_t offset = 2;
  ASSERT_TRUE(is_ok(deliver(session_->store(), epoch_, std::span(&records_.back(), 1), offset)));
  EXPECT_EQ(unread(alice_, c), std::make_pair(1u, false));
  auto after = session_->inbox().conversations(alice_, std::nullopt, 10);
  ASSERT_TRUE(is_ok(after));
  ASSERT_EQ(after->items.size(), 1u);
  EXPECT_EQ(after->items[0].last.seq, seq_of(2, 2));
}

// A backend may keep one row per epoch (inbox_backend.h): it returns the extra rows given here too.
class RowPerEpochInbox final : public ForwardingInbox {
 public:
  RowPerEpochInbox(InboxBackend& inner, std::vector<ConversationRow> extra)
      : ForwardingInbox(inner), extra_(std::move(extra)) {}
  Result<std::vector<ConversationRow>> conversation_rows(const UserId& user) override {
    QIM_ASSIGN_OR_RETURN(auto rows, ForwardingInbox::conversation_rows(user));
    rows.insert(rows.end(), extra_.begin(), extra_.end());
    return rows;
  }

 private:
  std::vector<ConversationRow> extra_;
};

TEST_P(InboxRulesTest, AnOlderEpochsVisibleRowDoesNotHideANewerVisibleEntry) {
  const ConversationId c = direct(alice_, bob_);
  const MailboxSeq old_seq = send(c, bob_, {alice_, bob_});
  auto old_rows = session_->backend().conversation_rows(alice_);
  ASSERT_TRUE(is_ok(old_rows));
  ASSERT_EQ(old_rows->size(), 1u);
  ASSERT_EQ(old_rows->front().last.seq, old_seq);
  ASSERT_TRUE(is_ok(session_->restart()));
  epoch_ = Epoch{2};
  const MailboxSeq visible = send(c, bob_, {alice_, bob_});
  records_.push_back(inbox_record(inbox_message(next_id_++, c, bob_, clock_->now_ms()), {alice_, bob_}));
  ASSERT_TRUE(is_ok(write_only(session_->store(), epoch_, std::span(&records_.back(), 1), next_offset_)));
  // Epoch 1's row (visible) beside epoch 2's (above its frontier): the list shows epoch 2's visible entry.
  RowPerEpochInbox per_epoch(session_->backend(), *old_rows);
  Inbox inbox(session_->store(), per_epoch);
  auto page = inbox.conversations(alice_, std::nullopt, 10);
  ASSERT_TRUE(is_ok(page));
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].last.seq, visible);
}

TEST_P(InboxRulesTest, ReadRaisesTheMarkAndTheReceiptOnlyUpward) {
  const ConversationId c = direct(alice_, bob_);
  const MailboxSeq s1 = send(c, bob_, {alice_, bob_});
  const MailboxSeq s2 = send(c, bob_, {alice_, bob_});
  auto r1 = session_->inbox().mark_read(alice_, c, s1);
  ASSERT_TRUE(is_ok(r1));
  EXPECT_TRUE(r1->moved);
  EXPECT_EQ(r1->read_seq, s1);
  EXPECT_EQ(r1->read_through, MessageId{1});
  EXPECT_EQ(unread(alice_, c), std::make_pair(1u, false));
  auto again = session_->inbox().mark_read(alice_, c, s1);
  ASSERT_TRUE(is_ok(again));
  EXPECT_FALSE(again->moved);
  auto r2 = session_->inbox().mark_read(alice_, c, s2);
  ASSERT_TRUE(is_ok(r2));
  auto lower = session_->inbox().mark_read(alice_, c, s1);
  ASSERT_TRUE(is_ok(lower));
  EXPECT_FALSE(lower->moved);
  EXPECT_EQ(lower->read_seq, s2) << "a lower READ changes nothing";
  EXPECT_EQ(unread(alice_, c), std::make_pair(0u, false));
  // Bob sees alice's receipt and what her mailbox holds.
  auto summary = session_->inbox().conversation(bob_, c);
  ASSERT_TRUE(is_ok(summary));
  EXPECT_EQ(summary->peer_read_through, MessageId{2});
  EXPECT_EQ(summary->peer_delivered_through, MessageId{2});
  EXPECT_EQ(summary->unread, 0u) << "bob's own messages";
}

TEST_P(InboxRulesTest, ReceiptsOffMovesTheMarkButNotTheReceipt) {
  const ConversationId g = group("team");
  send(g, bob_, {alice_, bob_, carol_});
  ASSERT_TRUE(is_ok(session_->backend().put_setting(alice_, "receipts", "off", 1)));
  auto read = session_->inbox().mark_read(alice_, g, seq_of(1, 1));
  ASSERT_TRUE(is_ok(read));
  EXPECT_TRUE(read->moved);
  EXPECT_EQ(unread(alice_, g), std::make_pair(0u, false));
  ASSERT_TRUE(is_ok(session_->inbox().mark_read(carol_, g, seq_of(1, 1))));
  const std::vector<UserId> members{alice_, bob_, carol_};
  auto receipts = session_->inbox().message_receipts(g, MessageId{1}, members);
  ASSERT_TRUE(is_ok(receipts));
  EXPECT_EQ(receipts->read_count, 1u);
  ASSERT_TRUE(receipts->readers);
  EXPECT_EQ(*receipts->readers, std::vector<UserId>{carol_});
}

TEST_P(InboxRulesTest, ANonMemberHasNothingToReadAndIsNeverAReader) {
  const ConversationId c = direct(alice_, bob_);
  send(c, bob_, {alice_, bob_});
  auto read = session_->inbox().mark_read(carol_, c, seq_of(1, 1));
  EXPECT_TRUE(fails_with(read, Errc::kNotFound));
  auto receipts = session_->backend().receipts(c, 10);
  ASSERT_TRUE(is_ok(receipts));
  EXPECT_TRUE(receipts->empty());
  EXPECT_TRUE(fails_with(session_->inbox().conversation(carol_, c), Errc::kNotFound));
}

TEST_P(InboxRulesTest, ReadersAreListedOnlyForSmallGroups) {
  const ConversationId g = group("team");
  send(g, bob_, {alice_, bob_, carol_});
  ASSERT_TRUE(is_ok(session_->inbox().mark_read(alice_, g, seq_of(1, 1))));
  Inbox small(session_->store(), session_->backend(), InboxOptions{.readers_max = 2});
  const std::vector<UserId> members{alice_, bob_, carol_};
  auto receipts = small.message_receipts(g, MessageId{1}, members);
  ASSERT_TRUE(is_ok(receipts));
  EXPECT_EQ(receipts->read_count, 1u);
  EXPECT_FALSE(receipts->readers);
  auto later = small.message_receipts(g, MessageId{2}, members);
  ASSERT_TRUE(is_ok(later));
  EXPECT_EQ(later->read_count, 0u) << "a receipt covers messages up to its own";
}

TEST_P(InboxRulesTest, TheListPagesByLastActivity) {
  std::vector<ConversationId> cs;
  for (int i = 0; i < 5; ++i) {
    cs.push_back(group("g" + std::to_string(i)));
    send(cs.back(), bob_, {alice_, bob_});
  }
  send(cs[1], bob_, {alice_, bob_});  // g1 is now the most recent
  std::vector<ConversationId> seen;
  std::optional<MailboxSeq> before;
  for (int pages = 0; pages < 10; ++pages) {
    auto page = session_->inbox().conversations(alice_, before, 2);
    ASSERT_TRUE(is_ok(page));
    EXPECT_EQ(page->unread_conversations, 5u);
    for (const auto& s : page->items) seen.push_back(s.conversation);
    if (!page->next_before) break;
    before = page->next_before;
  }
  EXPECT_EQ(seen, (std::vector<ConversationId>{cs[1], cs[4], cs[3], cs[2], cs[0]}));
  EXPECT_TRUE(fails_with(session_->inbox().conversations(alice_, std::nullopt, 0), Errc::kInvalidArgument));
}

TEST_P(InboxRulesTest, UnreadIsCappedAt999) {
  const ConversationId c = direct(alice_, bob_);
  std::vector<DispatchRecord> many;
  for (int i = 0; i < 1001; ++i)
    many.push_back(inbox_record(inbox_message(next_id_++, c, bob_, 0), {alice_}));
  ASSERT_TRUE(is_ok(deliver(session_->store(), epoch_, many, next_offset_)));
  EXPECT_EQ(unread(alice_, c), std::make_pair(999u, true));
  auto read = session_->inbox().mark_read(alice_, c, seq_of(1, 3));
  ASSERT_TRUE(is_ok(read));
  EXPECT_EQ(unread(alice_, c), std::make_pair(998u, false));
}

TEST_P(InboxRulesTest, TrimmedEntriesLeaveTheList) {
  if (auto why = GetParam().mailbox.limits.no_clock_entry_ttl) GTEST_SKIP() << *why;
  const ConversationId c = direct(alice_, bob_);
  send(c, bob_, {alice_, bob_});
  clock_->advance_ms(4 * kDayMs);
  auto swept = session_->store().sweep_retention(alice_);
  ASSERT_TRUE(is_ok(swept));
  EXPECT_EQ(unread(alice_, c), std::make_pair(0u, false));
  auto page = session_->inbox().conversations(alice_, std::nullopt, 10);
  ASSERT_TRUE(is_ok(page));
  EXPECT_TRUE(page->items.empty());
}

INSTANTIATE_TEST_SUITE_P(Backends, InboxRulesTest, ::testing::ValuesIn(inbox_backends()), fixture_name);

}  // namespace
}  // namespace qim::test
