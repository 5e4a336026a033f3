#include "gateway/membership.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace qim {
namespace {

UserId u(const char* s) {
  return *UserId::parse(s);
}
ConversationId c(const char* s) {
  return *ConversationId::parse(s);
}

TEST(Membership, BothPartiesOfADirectConversationAndNobodyElse) {
  EXPECT_TRUE(is_member(u("alice"), c("d:alice:bob")));
  EXPECT_TRUE(is_member(u("bob"), c("d:alice:bob")));
  EXPECT_FALSE(is_member(u("carol"), c("d:alice:bob")));
  EXPECT_FALSE(is_member(u("ali"), c("d:alice:bob")));
  // Not the canonical order: no such conversation (and it does not parse).
  EXPECT_FALSE(is_member(u("alice"), ConversationId::unchecked("d:bob:alice")));
}

// Names that are prefixes, suffixes or near-spellings of each other: membership is decided on the parsed
// pair, never by how the text fits together.
TEST(Membership, LookAlikeNamesAreNotMembers) {
  const std::vector<const char*> names = {"a", "a.b", "a@x", "b", "a-b", "a_b", "A", "b.c", "ab"};
  for (const char* x : names) {
    for (const char* y : names) {
      ConversationId conv = *direct_conversation(u(x), u(y));
      for (const char* z : names) {
        const bool party = std::string_view(z) == x || std::string_view(z) == y;
        EXPECT_EQ(is_member(u(z), conv), party) << z << " in " << conv.str();
      }
    }
  }
}

// "d:alice:bob:carol" once admitted alice, bob:carol, alice:bob and carol; "d:acme:alice:acme:bob"
// admitted acme into the conversation of acme:alice and acme:bob (issue 8, item 1). Such ids no longer
// exist, and nobody is a member of a malformed id.
TEST(Membership, AmbiguousIdsAreNotConversations) {
  for (const char* id : {"d:alice:bob:carol", "d:acme:alice:acme:bob", "d:a:b:c:d"}) {
    auto parsed = ConversationId::parse(id);
    EXPECT_FALSE(parsed.ok()) << id << " parses";
    ConversationId forced = ConversationId::unchecked(id);
    for (const char* user : {"alice", "carol", "acme", "a", "d"}) {
      EXPECT_FALSE(is_member(u(user), forced)) << user << " in " << id;
    }
  }
  EXPECT_FALSE(is_member(u("alice"), ConversationId{}));
}

}  // namespace
}  // namespace qim
