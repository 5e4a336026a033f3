#include "core/ids.h"

#include <gtest/gtest.h>

namespace qim {

TEST(Ids, ParsesBoundedNames) {
  EXPECT_TRUE(UserId::parse("alice").ok());
  EXPECT_EQ(UserId::parse("").code(), Errc::kInvalidArgument);
  EXPECT_EQ(UserId::parse(std::string(65, 'a')).code(), Errc::kInvalidArgument);
  auto bad = UserId::parse("al ice");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("user id"), std::string::npos);
}

// Exactly the 66 bytes of [A-Za-z0-9_.@-] make names: every other byte value, high bytes included, is
// refused.
TEST(Ids, TheNameAlphabetIsExactlyItsSixtySixBytes) {
  const std::string alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.@-";
  int allowed = 0;
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    const bool expected = alphabet.find(c) != std::string::npos;
    EXPECT_EQ(is_name_char(c), expected) << "byte " << b;
    EXPECT_EQ(UserId::parse(std::string("a") + c).ok(), expected) << "byte " << b;
    allowed += is_name_char(c);
  }
  EXPECT_EQ(allowed, 66);
}

TEST(Ids, DirectConversationIsSymmetric) {
  auto a = *UserId::parse("alice");
  auto b = *UserId::parse("bob");
  EXPECT_EQ(direct_conversation(a, b)->str(), "d:alice:bob");
  EXPECT_EQ(*direct_conversation(b, a), *direct_conversation(a, b));
}

}  // namespace qim

namespace qim {

// ':' separates the members of a conversation id, so it cannot be part of a name: with it, "d:a:b:c"
// would be both a<->b:c and a:b<->c (issue 8, item 1).
TEST(Ids, NamesCannotHoldTheSeparator) {
  for (const char* bad : {"bob:carol", ":", "a:", ":a", "acme:alice"}) {
    auto u = UserId::parse(bad);
    ASSERT_FALSE(u.ok()) << bad;
    EXPECT_EQ(u.code(), Errc::kInvalidArgument);
    EXPECT_NE(u.error().message().find("':'"), std::string::npos) << u.error().message();
    EXPECT_NE(u.error().message().find("user id"), std::string::npos) << u.error().message();
  }
  auto device = DeviceId::parse("ph:one");
  ASSERT_FALSE(device.ok());
  EXPECT_NE(device.error().message().find("device id"), std::string::npos) << device.error().message();
  for (const char* good : {"a", "a.b", "a@x", "a-b", "a_b", "A", "0", "alice@example.com"}) {
    EXPECT_TRUE(UserId::parse(good).ok()) << good;
  }
}

TEST(Ids, AConversationIdHasExactlyOneReading) {
  for (const char* good : {"d:alice:bob", "d:a:a.b", "d:carol:carol", "d:A:a"}) {
    auto c = ConversationId::parse(good);
    ASSERT_TRUE(c.ok()) << good << ": " << c.error().to_string();
    EXPECT_EQ(c->str(), good);
  }
  struct Bad {
    const char* id;
    const char* why;  // a part of the message that names the problem
  };
  for (const Bad& bad : std::initializer_list<Bad>{
           {"d:alice:bob:carol", "2 members"},      // alice<->bob:carol or alice:bob<->carol: neither
           {"d:acme:alice:acme:bob", "2 members"},  // acme<->alice:acme:bob or acme:alice<->acme:bob
           {"d:bob:alice", "order"},                // the same pair twice: only the canonical spelling
           {"d:alice", "2 members"},
           {"d::bob", "user id"},
           {"d:alice:", "user id"},
           {"d:al ice:bob", "user id"},
           {"x:team", "kind"},
           {"g:", "group id"},
           {"g:a:b", "group id"},
           {"alice", "kind"},
           {"", "conversation id"},
       }) {
    auto c = ConversationId::parse(bad.id);
    ASSERT_FALSE(c.ok()) << bad.id;
    EXPECT_EQ(c.code(), Errc::kInvalidArgument) << bad.id;
    EXPECT_NE(c.error().message().find(bad.why), std::string::npos) << bad.id << ": " << c.error().message();
  }
}

TEST(Ids, TheLongestNamesStillMakeAConversation) {
  auto a = *UserId::parse(std::string(UserId::kMaxBytes, 'a'));
  auto b = *UserId::parse(std::string(UserId::kMaxBytes, 'b'));
  auto c = direct_conversation(a, b);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->str().size(), 2 + 2 * UserId::kMaxBytes + 1);
  EXPECT_EQ(*ConversationId::parse(c->str()), *c);
}

}  // namespace qim
