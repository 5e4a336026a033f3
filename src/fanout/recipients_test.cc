#include "fanout/recipients.h"

#include <gtest/gtest.h>

namespace qim {
namespace {

UserId user(const char* s) {
  return UserId::parse(s).value();
}

OutboxRecord record(const UserId& from, const UserId& to) {
  OutboxRecord r;
  r.conversation = direct_conversation(from, to).value();
  r.sender = from;
  return r;
}

TEST(RecipientsTest, OneToOneGoesToThePeerAndTheSendersOtherDevices) {
  auto r = resolve_recipients(record(user("bob"), user("alice")));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(*r, (std::vector<UserId>{user("alice"), user("bob")}));
  r = resolve_recipients(record(user("alice"), user("bob")));  // either side of "d:alice:bob"
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<UserId>{user("alice"), user("bob")}));
}

TEST(RecipientsTest, ANoteToSelfHasOneRecipient) {
  auto r = resolve_recipients(record(user("carol"), user("carol")));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, std::vector<UserId>{user("carol")});
}

TEST(RecipientsTest, LookAlikeNamesResolveToExactlyThePair) {
  auto r = resolve_recipients(record(user("a.b"), user("a")));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(*r, (std::vector<UserId>{user("a"), user("a.b")}));
  EXPECT_EQ(direct_peer(*direct_conversation(user("a"), user("a@x")), user("a"))->str(), "a@x");
  EXPECT_EQ(direct_peer(*direct_conversation(user("a"), user("a@x")), user("a@x"))->str(), "a");
  EXPECT_EQ(direct_peer(*direct_conversation(user("a"), user("a@x")), user("x")).code(),
            Errc::kInvalidArgument);
}

// An id that two pairs of names could spell is no conversation (issue 8, item 1): "d:a:b:c:d" once sent
// a's message to "b:c:d", and c:d's to "a:b".
TEST(RecipientsTest, AnAmbiguousIdHasNoRecipients) {
  EXPECT_FALSE(ConversationId::parse("d:a:b:c:d").ok());
  const ConversationId forced = ConversationId::unchecked("d:a:b:c:d");
  for (const char* member : {"a", "d"}) {
    auto peer = direct_peer(forced, user(member));
    ASSERT_FALSE(peer.ok()) << member << " -> " << peer->str();
    EXPECT_EQ(peer.code(), Errc::kInvalidArgument);
  }
}

TEST(RecipientsTest, RefusesOtherConversationKindsAndOutsiders) {
  OutboxRecord group;
  group.conversation = ConversationId::unchecked("g:team");  // a group: its members are not in the id
  group.sender = user("alice");
  auto r = resolve_recipients(group);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.code(), Errc::kInvalidArgument);
  EXPECT_NE(r.error().message().find("not a one-to-one"), std::string::npos);

  OutboxRecord outsider = record(user("alice"), user("bob"));
  outsider.sender = user("mallory");
  EXPECT_EQ(resolve_recipients(outsider).code(), Errc::kInvalidArgument);
  outsider.sender = user("ali");  // a prefix of a party is not a party
  EXPECT_EQ(resolve_recipients(outsider).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace qim
