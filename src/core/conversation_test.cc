#include "core/conversation.h"

#include <gtest/gtest.h>

namespace qim {
namespace {

UserId u(const char* s) {
  return *UserId::parse(s);
}

TEST(Conversation, ParsesADirectIdIntoItsKindAndMembers) {
  auto c = Conversation::parse("d:a:a.b");
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->kind(), ConversationKind::kDirect);
  EXPECT_EQ(c->id().str(), "d:a:a.b");
  ASSERT_NE(c->direct_pair(), nullptr);
  EXPECT_EQ(c->direct_pair()->low, u("a"));
  EXPECT_EQ(c->direct_pair()->high, u("a.b"));
  EXPECT_EQ(c->direct_pair()->peer_of(u("a")), u("a.b"));
  EXPECT_EQ(c->direct_pair()->peer_of(u("a.b")), u("a"));
  EXPECT_EQ(c->direct_pair()->peer_of(u("b")), std::nullopt);
  EXPECT_FALSE(c->direct_pair()->has(u("a.")));
}

TEST(Conversation, DirectIsTheSameWhicheverSideComesFirst) {
  auto ab = Conversation::direct(u("bob"), u("alice"));
  ASSERT_TRUE(ab.ok());
  EXPECT_EQ(ab->id().str(), "d:alice:bob");
  EXPECT_EQ(Conversation::direct(u("alice"), u("bob"))->id(), ab->id());
  auto self = Conversation::direct(u("carol"), u("carol"));
  ASSERT_TRUE(self.ok());
  EXPECT_EQ(self->id().str(), "d:carol:carol");
  EXPECT_EQ(self->direct_pair()->peer_of(u("carol")), u("carol"));
  // Names that never went through parse are refused, not spliced into an id.
  auto forced = Conversation::direct(u("alice"), UserId::unchecked("bob:carol"));
  ASSERT_FALSE(forced.ok());
  EXPECT_NE(forced.error().message().find("user id 'bob:carol'"), std::string::npos);
  EXPECT_FALSE(Conversation::direct(u("alice"), UserId{}).ok());
}

TEST(Conversation, OfReadsAnIdBackAndRefusesWhatDoesNotParse) {
  auto id = *direct_conversation(u("x"), u("y"));
  auto c = Conversation::of(id);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->id(), id);
  EXPECT_EQ(Conversation::of(ConversationId{}).code(), Errc::kInvalidArgument);
  EXPECT_EQ(Conversation::of(ConversationId::unchecked("d:y:x")).code(), Errc::kInvalidArgument);
}

TEST(Conversation, ErrorsNameTheIdAndTheProblem) {
  auto three = Conversation::parse("d:alice:bob:carol");
  ASSERT_FALSE(three.ok());
  EXPECT_EQ(three.error().message(),
            "conversation id 'd:alice:bob:carol' names 3 members; a direct conversation has 2 members, "
            "'d:<user>:<user>' (user ids cannot hold ':')");
  auto order = Conversation::parse("d:bob:alice");
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(
      order.error().message(),
      "conversation id 'd:bob:alice' is not canonical: the members must be in byte order, 'd:alice:bob'");
  auto kind = Conversation::parse("x:team");
  ASSERT_FALSE(kind.ok());
  EXPECT_NE(kind.error().message().find("unknown kind 'x'"), std::string::npos) << kind.error().message();
  auto group = Conversation::parse("g:team");
  ASSERT_TRUE(group.ok()) << group.error().to_string();
  EXPECT_EQ(group->kind(), ConversationKind::kGroup);
  ASSERT_NE(group->group_id(), nullptr);
  EXPECT_EQ(group->group_id()->str(), "team");
  EXPECT_EQ(group->direct_pair(), nullptr);
  for (const char* bad : {"g:", "g:a:b", "g:te am"}) {
    auto g = Conversation::parse(bad);
    ASSERT_FALSE(g.ok()) << bad;
    EXPECT_NE(g.error().message().find("bad group: group id"), std::string::npos) << g.error().message();
  }
  auto member = Conversation::parse("d:alice:b\x01");
  ASSERT_FALSE(member.ok());
  EXPECT_NE(member.error().message().find("second member: user id 'b\\x01' has '\\x01' at byte 2"),
            std::string::npos)
      << member.error().message();
  auto longest = std::string("d:") + std::string(64, 'a') + ":" + std::string(65, 'b');
  auto too_long = Conversation::parse(longest);
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.error().message().find("over the limit of 131"), std::string::npos)
      << too_long.error().message();
}

}  // namespace
}  // namespace qim
