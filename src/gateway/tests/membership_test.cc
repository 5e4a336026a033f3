#include "gateway/membership.h"

#include <gtest/gtest.h>

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
  EXPECT_FALSE(is_member(u("alice"), c("g:team")));
  EXPECT_FALSE(is_member(u("alice"), c("d:bob:alice")));  // not the canonical order: no such conversation
}

TEST(Membership, UserIdsWithColonsAreNotConfused) {
  // "d:a:b:c" is the conversation of ("a", "b:c") only: "a:b" and "c" compose to the same text but
  // direct_conversation orders them, and only the canonical pair matches.
  ConversationId conv = *direct_conversation(u("a"), u("b:c"));
  EXPECT_TRUE(is_member(u("a"), conv));
  EXPECT_TRUE(is_member(u("b:c"), conv));
  EXPECT_FALSE(is_member(u("b"), conv));
}

}  // namespace
}  // namespace qim
