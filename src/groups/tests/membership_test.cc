// The membership rules fanout applies at each Outbox offset (groups/membership.h).
#include "groups/membership.h"

#include <gtest/gtest.h>

#include "groups/group_codec.h"

namespace qim {
namespace {

UserId u(const char* s) {
  return UserId::parse(s).value();
}

GroupOp op(GroupOpKind kind, std::vector<UserId> members = {}, std::string name = {}) {
  return GroupOp{kind, std::move(members), std::move(name), GroupRole::kMember};
}

TEST(GroupMembershipTest, IntervalsDecideWhoIsAMemberAtEachOffset) {
  GroupState g(GroupId::parse("team").value());
  EXPECT_TRUE(g.apply(op(GroupOpKind::kCreate, {u("bob")}, "team"), u("alice"), 10, 100).outcome.applied);
  EXPECT_TRUE(g.apply(op(GroupOpKind::kAdd, {u("carol")}), u("alice"), 20, 100).outcome.applied);
  EXPECT_TRUE(g.apply(op(GroupOpKind::kRemove, {u("bob")}), u("alice"), 30, 100).outcome.applied);
  EXPECT_TRUE(g.apply(op(GroupOpKind::kAdd, {u("bob")}), u("alice"), 40, 100).outcome.applied);

  EXPECT_EQ(g.members_at(15), (std::vector<UserId>{u("alice"), u("bob")}));
  EXPECT_EQ(g.members_at(20), (std::vector<UserId>{u("alice"), u("bob"), u("carol")}));  // carol gets her add
  EXPECT_EQ(g.members_at(30),
            (std::vector<UserId>{u("alice"), u("bob"), u("carol")}));  // bob gets his removal
  EXPECT_EQ(g.members_at(35), (std::vector<UserId>{u("alice"), u("carol")}));
  EXPECT_EQ(g.members_at(45), (std::vector<UserId>{u("alice"), u("bob"), u("carol")}));
  EXPECT_TRUE(g.members_at(5).empty());
  EXPECT_EQ(g.meta()->member_count, 3u);
  EXPECT_EQ(g.member(u("bob"))->intervals.size(), 2u);
  EXPECT_EQ(g.member(u("bob"))->joined_at(), 40u);
  EXPECT_EQ(g.member(u("alice"))->role, GroupRole::kOwner);
}

TEST(GroupMembershipTest, AnOpReadAgainIsNotDecidedAgain) {
  GroupState g(GroupId::parse("team").value());
  g.apply(op(GroupOpKind::kCreate, {u("bob")}, "team"), u("alice"), 1, 100);
  // bob (a member) may not add: refused, and that refusal is what a replay of offset 2 sees, even after
  // bob became an admin at offset 3.
  GroupChange refused = g.apply(op(GroupOpKind::kAdd, {u("carol")}), u("bob"), 2, 100);
  EXPECT_FALSE(refused.outcome.applied);
  EXPECT_EQ(refused.outcome.refusal, GroupRefusal::kNotAllowed);
  GroupOp promote{GroupOpKind::kSetRole, {u("bob")}, {}, GroupRole::kAdmin};
  EXPECT_TRUE(g.apply(promote, u("alice"), 3, 100).outcome.applied);
  GroupChange again = g.apply(op(GroupOpKind::kAdd, {u("carol")}), u("bob"), 2, 100);
  EXPECT_EQ(again.outcome, refused.outcome);
  EXPECT_TRUE(again.members.empty());
  EXPECT_FALSE(again.meta.has_value());
  EXPECT_FALSE(g.member_at(u("carol"), 5));
  // The applied create read again changes nothing either.
  GroupChange create_again = g.apply(op(GroupOpKind::kCreate, {u("dave")}, "x"), u("alice"), 1, 100);
  EXPECT_TRUE(create_again.outcome.applied);
  EXPECT_TRUE(create_again.members.empty());
  EXPECT_EQ(g.meta()->name, "team");
  EXPECT_EQ(g.member(u("dave")), nullptr);
}

TEST(GroupMembershipTest, RightsAndTheLimit) {
  GroupState g(GroupId::parse("team").value());
  EXPECT_EQ(g.apply(op(GroupOpKind::kAdd, {u("bob")}), u("alice"), 1, 3).outcome.refusal,
            GroupRefusal::kUnknownGroup);
  EXPECT_TRUE(g.apply(op(GroupOpKind::kCreate, {u("bob")}, "team"), u("alice"), 2, 3).outcome.applied);
  EXPECT_EQ(g.apply(op(GroupOpKind::kCreate, {}, "again"), u("alice"), 3, 3).outcome.refusal,
            GroupRefusal::kInvalid);
  EXPECT_EQ(g.apply(op(GroupOpKind::kAdd, {u("carol")}), u("mallory"), 4, 3).outcome.refusal,
            GroupRefusal::kNotMember);
  EXPECT_EQ(g.apply(op(GroupOpKind::kRename, {}, "x"), u("bob"), 5, 3).outcome.refusal,
            GroupRefusal::kNotAllowed);
  EXPECT_EQ(g.apply(op(GroupOpKind::kRemove, {u("alice")}), u("alice"), 6, 3).outcome.refusal,
            GroupRefusal::kNotAllowed);
  EXPECT_EQ(g.apply(op(GroupOpKind::kLeave), u("alice"), 7, 3).outcome.refusal, GroupRefusal::kNotAllowed);
  GroupChange full = g.apply(op(GroupOpKind::kAdd, {u("carol"), u("dave")}), u("alice"), 8, 3);
  EXPECT_EQ(full.outcome.refusal, GroupRefusal::kFull);
  EXPECT_NE(full.outcome.reason.find("over the limit of 3"), std::string::npos) << full.outcome.reason;
  EXPECT_FALSE(g.member_at(u("carol"), 9));  // refused whole
  EXPECT_TRUE(g.apply(op(GroupOpKind::kAdd, {u("carol"), u("bob")}), u("alice"), 9, 3).outcome.applied);
  GroupChange left = g.apply(op(GroupOpKind::kLeave), u("bob"), 10, 3);
  EXPECT_TRUE(left.outcome.applied);
  EXPECT_EQ(left.left, (std::vector<UserId>{u("bob")}));
  EXPECT_EQ(g.meta()->member_count, 2u);
  EXPECT_EQ(g.apply(op(GroupOpKind::kCreate, {u("a"), u("b"), u("c")}, "big"), u("x"), 1, 3).outcome.applied,
            false);  // offset 1 was read before (the refused add): its outcome stands
}

TEST(GroupMembershipTest, TheSystemEntryBodyIsJsonForClientsWithTextForPeople) {
  EXPECT_EQ(group_op_body(op(GroupOpKind::kAdd, {u("carol")}), u("bob")),
            R"({"group_op":"add","by":"bob","members":["carol"],"text":"bob added carol"})");
  EXPECT_EQ(
      group_op_body(op(GroupOpKind::kRename, {}, "say \"hi\""), u("bob")),
      R"({"group_op":"rename","by":"bob","members":[],"name":"say \"hi\"","text":"bob renamed the group to 'say \"hi\"'"})");
}

// Issue 36, item 1: 65,537 add/remove cycles of one name used to give a member row of 65,537 intervals,
// which the reader refuses: the group could never be loaded again (and fanout stalled its partition). The
// writer now refuses the add that would pass kMaxMemberIntervals, so every row it writes loads again.
TEST(GroupMembershipTest, ReAddsStopAtTheIntervalBoundAndEveryRowWrittenLoadsAgain) {
  GroupState g(GroupId::parse("team").value());
  ASSERT_TRUE(g.apply(op(GroupOpKind::kCreate, {}, "team"), u("alice"), 1, 100).outcome.applied);
  uint64_t offset = 2;
  size_t refused = 0;
  GroupChange last_written;
  for (int cycle = 0; cycle < 65'537; ++cycle) {
    GroupChange add = g.apply(op(GroupOpKind::kAdd, {u("bob")}), u("alice"), offset++, 100);
    if (!add.outcome.applied) {
      EXPECT_EQ(add.outcome.refusal, GroupRefusal::kFull);
      ++refused;
    }
    GroupChange remove = g.apply(op(GroupOpKind::kRemove, {u("bob")}), u("alice"), offset++, 100);
    EXPECT_TRUE(remove.outcome.applied);
    if (!remove.members.empty()) last_written = remove;
  }
  EXPECT_EQ(refused, 65'537u - kMaxMemberIntervals);
  ASSERT_NE(g.member(u("bob")), nullptr);
  EXPECT_EQ(g.member(u("bob"))->intervals.size(), kMaxMemberIntervals);
  EXPECT_FALSE(g.member(u("bob"))->current());
  // What a cold load reads: the rows as written, decoded, rebuild the same state.
  std::vector<GroupMemberRecord> rows;
  for (const auto& [user, record] : g.members()) {
    auto decoded = decode_member_row(g.group(), user.str(), encode_group_member(record));
    ASSERT_TRUE(decoded.ok()) << decoded.error().to_string();
    rows.push_back(*decoded);
  }
  ASSERT_EQ(last_written.members.size(), 1u);
  EXPECT_TRUE(decode_group_member(encode_group_member(last_written.members[0])).ok());
  GroupState loaded(*g.meta(), rows, g.ops());
  EXPECT_EQ(loaded.members_at(offset - 1), g.members_at(offset - 1));
  EXPECT_TRUE(loaded.member_at(u("bob"), 2));
  EXPECT_FALSE(loaded.member_at(u("bob"), offset - 1));
  // Another user still joins, and bob's refusal names the bound.
  EXPECT_TRUE(loaded.apply(op(GroupOpKind::kAdd, {u("carol")}), u("alice"), offset, 100).outcome.applied);
  GroupChange again = loaded.apply(op(GroupOpKind::kAdd, {u("bob"), u("dave")}), u("alice"), offset + 1, 100);
  EXPECT_EQ(again.outcome.refusal, GroupRefusal::kFull);
  EXPECT_NE(again.outcome.reason.find("1024 times"), std::string::npos) << again.outcome.reason;
  EXPECT_FALSE(loaded.member_at(u("dave"), offset + 1)) << "an op is refused whole";
}

}  // namespace
}  // namespace qim
