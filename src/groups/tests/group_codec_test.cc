#include "groups/group_codec.h"

#include <gtest/gtest.h>

namespace qim {
namespace {

TEST(GroupCodecTest, RowsRoundTripAndBadRowsAreCorrupt) {
  GroupMeta meta{GroupId::parse("team").value(), "the team", UserId::parse("alice").value(), 7, 3};
  EXPECT_EQ(decode_group_meta(encode_group_meta(meta)).value(), meta);
  GroupMemberRecord m{UserId::parse("bob").value(), GroupRole::kAdmin, {{7, 9}, {12, kOpenInterval}}};
  EXPECT_EQ(decode_group_member(encode_group_member(m)).value(), m);
  GroupOpOutcome o{false, GroupRefusal::kFull, "over the limit"};
  EXPECT_EQ(decode_group_outcome(encode_group_outcome(o)).value(), o);

  GroupMemberRecord overlapping{
      UserId::parse("bob").value(), GroupRole::kMember, {{7, 9}, {9, kOpenInterval}}};
  auto bad = decode_group_member(encode_group_member(overlapping));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), Errc::kCorruptEntry);
  EXPECT_NE(bad.error().message().find("intervals"), std::string::npos) << bad.error().message();
  EXPECT_EQ(decode_group_meta("x").code(), Errc::kCorruptEntry);
  std::string trailing = encode_group_outcome(o) + "z";
  EXPECT_EQ(decode_group_outcome(trailing).code(), Errc::kCorruptEntry);
}

}  // namespace
}  // namespace qim
