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

TEST(Ids, DirectConversationIsSymmetric) {
  auto a = *UserId::parse("alice");
  auto b = *UserId::parse("bob");
  EXPECT_EQ(direct_conversation(a, b)->str(), "d:alice:bob");
  EXPECT_EQ(*direct_conversation(b, a), *direct_conversation(a, b));
}

}  // namespace qim
