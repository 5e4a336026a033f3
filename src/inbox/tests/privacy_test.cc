// The privacy rules (inbox/privacy.h: blocking, mute, delete for me; issue 39 items 3, 6, 7) and their
// effect on the conversation list, on every inbox backend.
#include "inbox/privacy.h"

#include "inbox/tests/inbox_suite.h"

namespace qim::test {
namespace {

class PrivacyTest : public InboxSuite {
 protected:
  Privacy privacy() { return Privacy(session_->inbox().backend()); }
  ConversationPage list(const UserId& u, int64_t now_ms) {
    auto page = session_->inbox().conversations(u, std::nullopt, 50, now_ms);
    EXPECT_TRUE(is_ok(page));
    return page.ok() ? *page : ConversationPage{};
  }
  const ConversationSummary* item(const ConversationPage& page, const ConversationId& c) {
    for (const auto& s : page.items) {
      if (s.conversation == c) return &s;
    }
    return nullptr;
  }
};

TEST_P(PrivacyTest, BlocksAreListedReversedAndLastWriterWins) {
  Privacy p = privacy();
  ASSERT_TRUE(is_ok(p.block(alice_, bob_, 100)));
  ASSERT_TRUE(is_ok(p.block(alice_, carol_, 100)));
  EXPECT_EQ(*p.blocks(alice_), (std::vector<UserId>{std::min(bob_, carol_), std::max(bob_, carol_)}));
  EXPECT_EQ(*p.blocked_by(bob_), std::set<UserId>{alice_});
  EXPECT_TRUE(p.blocked_by(alice_)->empty());
  ASSERT_TRUE(is_ok(p.unblock(alice_, bob_, 50)));  // older than the block: loses
  EXPECT_EQ(*p.blocked_by(bob_), std::set<UserId>{alice_});
  ASSERT_TRUE(is_ok(p.unblock(alice_, bob_, 200)));
  EXPECT_TRUE(p.blocked_by(bob_)->empty());
  EXPECT_EQ(*p.blocks(alice_), std::vector<UserId>{carol_});
  ASSERT_TRUE(is_ok(p.block(alice_, bob_, 300)));  // blocked again
  EXPECT_EQ(*p.blocked_by(bob_), std::set<UserId>{alice_});
  EXPECT_EQ(p.block(alice_, alice_, 400).code(), Errc::kInvalidArgument);
  // Settings are not made of these cells.
  EXPECT_TRUE(session_->inbox().backend().settings(alice_)->empty());
  EXPECT_TRUE(session_->inbox().backend().settings(bob_)->empty());
}

TEST_P(PrivacyTest, MuteTakesTheBadgeNotTheCount) {
  const ConversationId c1 = direct(alice_, bob_);
  const ConversationId c2 = direct(alice_, carol_);
  send(c1, bob_, {alice_, bob_});
  send(c2, carol_, {alice_, carol_});
  const int64_t now = clock_->now_ms();
  EXPECT_EQ(list(alice_, now).unread_conversations, 2u);
  Privacy p = privacy();
  ASSERT_TRUE(is_ok(p.mute(alice_, c1, now + 1000, now)));
  auto page = list(alice_, now);
  EXPECT_EQ(page.unread_conversations, 1u) << "a muted conversation is no badge";
  ASSERT_NE(item(page, c1), nullptr);
  EXPECT_EQ(item(page, c1)->unread, 1u) << "its own count is still shown";
  ASSERT_TRUE(item(page, c1)->muted);
  EXPECT_EQ(item(page, c1)->muted->until_ms, now + 1000);
  EXPECT_FALSE(item(page, c2)->muted);
  EXPECT_FALSE(list(bob_, now).items.front().muted) << "bob's list is his own";
  // Over at its time.
  EXPECT_EQ(list(alice_, now + 1000).unread_conversations, 2u);
  // For ever, then unmuted.
  ASSERT_TRUE(is_ok(p.mute(alice_, c2, std::nullopt, now + 1)));
  page = list(alice_, now + 10'000'000);
  EXPECT_EQ(page.unread_conversations, 1u);
  ASSERT_TRUE(item(page, c2)->muted);
  EXPECT_FALSE(item(page, c2)->muted->until_ms);
  ASSERT_TRUE(is_ok(p.unmute(alice_, c2, now + 2)));
  EXPECT_EQ(list(alice_, now + 10'000'000).unread_conversations, 2u);
  EXPECT_EQ(p.mute(alice_, c1, now, now).code(), Errc::kInvalidArgument) << "an until already over";
}

TEST_P(PrivacyTest, DeleteForMeHidesFromTheUsersListOnly) {
  const ConversationId c = direct(alice_, bob_);
  send(c, bob_, {alice_, bob_});    // message 1
  send(c, bob_, {alice_, bob_});    // message 2
  send(c, alice_, {alice_, bob_});  // message 3
  const int64_t now = clock_->now_ms();
  Privacy p = privacy();
  ASSERT_TRUE(is_ok(p.hide_message(alice_, c, MessageId{3}, now)));
  auto hidden = p.hidden(alice_);
  ASSERT_TRUE(is_ok(hidden));
  EXPECT_TRUE(hidden->hides(c, MessageId{3}));
  EXPECT_FALSE(hidden->hides(c, MessageId{2}));
  auto page = list(alice_, now);
  ASSERT_EQ(page.items.size(), 1u);
  EXPECT_EQ(page.items[0].last.message, MessageId{2}) << "the latest entry not deleted";
  EXPECT_EQ(list(bob_, now).items.at(0).last.message, MessageId{3}) << "bob is unaffected";

  ASSERT_TRUE(is_ok(p.hide_conversation(alice_, c, MessageId{3}, now + 1)));
  EXPECT_TRUE(list(alice_, now).items.empty()) << "the whole conversation is gone from the list";
  EXPECT_EQ(list(bob_, now).items.size(), 1u);
  EXPECT_TRUE(p.hidden(alice_)->hides(c, MessageId{1}));
  send(c, bob_, {alice_, bob_});  // message 4: the conversation is back with it
  page = list(alice_, now);
  ASSERT_EQ(page.items.size(), 1u);
  EXPECT_EQ(page.items[0].last.message, MessageId{4});
  EXPECT_FALSE(p.hidden(alice_)->hides(c, MessageId{4}));
  // The plain list (no privacy) is unchanged.
  EXPECT_EQ(session_->inbox().conversations(alice_, std::nullopt, 50)->items.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Backends, PrivacyTest, ::testing::ValuesIn(inbox_backends()), fixture_name);

}  // namespace
}  // namespace qim::test
