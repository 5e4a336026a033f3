// The InboxBackend contract, on every backend: what an engine must store (inbox_backend.h), checked
// through the primitives directly.
#include <algorithm>

#include "inbox/tests/inbox_suite.h"

namespace qim::test {
namespace {

class InboxBackendTest : public InboxSuite {
 protected:
  MailboxEntry entry(const UserId& user, const ConversationId& c, uint64_t offset, const UserId& sender,
                     uint32_t epoch = 1) {
    return MailboxEntry{user, seq_of(epoch, offset), inbox_message(offset, c, sender, clock_->now_ms())};
  }
  Status write(std::vector<MailboxEntry> entries) {
    return session_->backend().entries_written(kInboxShard, Epoch{1}, entries);
  }
};

TEST_P(InboxBackendTest, RowKeepsTheHighestSeqAndIndexKeepsEvery) {
  InboxBackend& b = session_->backend();
  const ConversationId c = direct(alice_, bob_);
  ASSERT_TRUE(is_ok(write({entry(alice_, c, 5, bob_), entry(alice_, c, 9, bob_)})));
  ASSERT_TRUE(is_ok(write({entry(alice_, c, 7, bob_)})));  // a lower seq later: the row stays at 9
  ASSERT_TRUE(is_ok(write({entry(alice_, c, 9, bob_)})));  // a replay: changes nothing
  auto rows = b.conversation_rows(alice_);
  ASSERT_TRUE(is_ok(rows));
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().conversation, c);
  EXPECT_EQ(rows->front().last.seq, seq_of(1, 9));
  EXPECT_EQ(rows->front().last.sender, bob_);
  EXPECT_TRUE(rows->front().last.counts);
  EXPECT_EQ(rows->front().last.preview, "message 9");

  auto desc = b.index_rows_desc(alice_, c, MailboxSeq{}, seq_of(1, 100), 10);
  ASSERT_TRUE(is_ok(desc));
  std::vector<MailboxSeq> seqs;
  for (const auto& r : *desc) seqs.push_back(r.seq);
  EXPECT_EQ(seqs, (std::vector<MailboxSeq>{seq_of(1, 9), seq_of(1, 7), seq_of(1, 5)}));
  auto bounded = b.index_rows_desc(alice_, c, seq_of(1, 5), seq_of(1, 8), 10);
  ASSERT_TRUE(is_ok(bounded));
  ASSERT_EQ(bounded->size(), 1u);
  EXPECT_EQ(bounded->front().seq, seq_of(1, 7));
  auto limited = b.index_rows_desc(alice_, c, MailboxSeq{}, seq_of(1, 100), 2);
  ASSERT_TRUE(is_ok(limited));
  EXPECT_EQ(limited->size(), 2u);
  // Another user's and another conversation's rows never mix in.
  auto none = b.index_rows_desc(bob_, c, MailboxSeq{}, seq_of(1, 100), 10);
  ASSERT_TRUE(is_ok(none));
  EXPECT_TRUE(none->empty());
}

TEST_P(InboxBackendTest, CountsOnlyCountingRowsInRangeUpToTheCap) {
  InboxBackend& b = session_->backend();
  const ConversationId c = direct(alice_, bob_);
  std::vector<MailboxEntry> es;
  for (uint64_t o = 1; o <= 10; ++o) es.push_back(entry(alice_, c, o, o % 2 ? bob_ : alice_));
  ASSERT_TRUE(is_ok(write(es)));
  auto all = b.count_unread(alice_, c, MailboxSeq{}, seq_of(1, 10), 100);
  ASSERT_TRUE(is_ok(all));
  EXPECT_EQ(*all, 5u) << "alice's own messages do not count";
  auto range = b.count_unread(alice_, c, seq_of(1, 3), seq_of(1, 7), 100);  // 5, 7
  ASSERT_TRUE(is_ok(range));
  EXPECT_EQ(*range, 2u);
  auto capped = b.count_unread(alice_, c, MailboxSeq{}, seq_of(1, 10), 3);
  ASSERT_TRUE(is_ok(capped));
  EXPECT_EQ(*capped, 3u);
}

TEST_P(InboxBackendTest, RowsExpireWithTheEntries) {
  if (auto why = GetParam().mailbox.limits.no_clock_entry_ttl) GTEST_SKIP() << *why;
  InboxBackend& b = session_->backend();
  const ConversationId c = direct(alice_, bob_);
  ASSERT_TRUE(is_ok(write({entry(alice_, c, 1, bob_)})));
  clock_->advance_ms(context_.entry_ttl_ms() + 1);
  auto rows = b.conversation_rows(alice_);
  ASSERT_TRUE(is_ok(rows));
  EXPECT_TRUE(rows->empty());
  auto desc = b.index_rows_desc(alice_, c, MailboxSeq{}, seq_of(1, 100), 10);
  ASSERT_TRUE(is_ok(desc));
  EXPECT_TRUE(desc->empty());
  auto n = b.count_unread(alice_, c, MailboxSeq{}, seq_of(1, 100), 10);
  ASSERT_TRUE(is_ok(n));
  EXPECT_EQ(*n, 0u);
}

TEST_P(InboxBackendTest, MarksReceiptsAndSettingsOnlyRise) {
  InboxBackend& b = session_->backend();
  const ConversationId c = direct(alice_, bob_);
  const ConversationId g = group("team");
  ASSERT_TRUE(is_ok(b.raise_read_mark(alice_, c, seq_of(1, 8))));
  ASSERT_TRUE(is_ok(b.raise_read_mark(alice_, c, seq_of(1, 3))));
  ASSERT_TRUE(is_ok(b.raise_read_mark(alice_, g, seq_of(2, 1))));
  auto mark = b.read_mark(alice_, c);
  ASSERT_TRUE(is_ok(mark));
  EXPECT_EQ(*mark, seq_of(1, 8));
  auto unknown = b.read_mark(bob_, c);
  ASSERT_TRUE(is_ok(unknown));
  EXPECT_TRUE(unknown->is_zero());
  auto marks = b.read_marks(alice_);
  ASSERT_TRUE(is_ok(marks));
  ASSERT_EQ(marks->size(), 2u);

  ASSERT_TRUE(is_ok(b.raise_receipt(g, bob_, MessageId{50})));
  ASSERT_TRUE(is_ok(b.raise_receipt(g, bob_, MessageId{40})));
  ASSERT_TRUE(is_ok(b.raise_receipt(g, carol_, MessageId{45})));
  auto receipts = b.receipts(g, 10);
  ASSERT_TRUE(is_ok(receipts));
  ASSERT_EQ(receipts->size(), 2u);
  for (const auto& r : *receipts) EXPECT_EQ(r.read_through, r.user == bob_ ? MessageId{50} : MessageId{45});
  auto one = b.receipts(g, 1);
  ASSERT_TRUE(is_ok(one));
  EXPECT_EQ(one->size(), 1u);

  ASSERT_TRUE(is_ok(b.put_setting(alice_, "receipts", "off", 2000)));
  ASSERT_TRUE(is_ok(b.put_setting(alice_, "receipts", "on", 1000)));  // older: loses
  ASSERT_TRUE(is_ok(b.put_setting(alice_, "presence", "contacts", 1000)));
  auto settings = b.settings(alice_);
  ASSERT_TRUE(is_ok(settings));
  EXPECT_EQ((*settings)["receipts"], "off");
  EXPECT_EQ((*settings)["presence"], "contacts");
  auto none = b.settings(bob_);
  ASSERT_TRUE(is_ok(none));
  EXPECT_TRUE(none->empty());
}

TEST_P(InboxBackendTest, SurvivesARestart) {
  const ConversationId c = direct(alice_, bob_);
  send(c, bob_, {alice_, bob_});
  ASSERT_TRUE(is_ok(session_->backend().raise_read_mark(alice_, c, seq_of(1, 1))));
  ASSERT_TRUE(is_ok(session_->restart()));
  auto rows = session_->backend().conversation_rows(alice_);
  ASSERT_TRUE(is_ok(rows));
  ASSERT_EQ(rows->size(), 1u);
  auto mark = session_->backend().read_mark(alice_, c);
  ASSERT_TRUE(is_ok(mark));
  EXPECT_EQ(*mark, seq_of(1, 1));
}

INSTANTIATE_TEST_SUITE_P(Backends, InboxBackendTest, ::testing::ValuesIn(inbox_backends()), fixture_name);

}  // namespace
}  // namespace qim::test
