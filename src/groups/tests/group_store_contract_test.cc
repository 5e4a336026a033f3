// The GroupStore contract (groups/group_store.h), run against the backend of group_store_fixture.h.
// Every read goes through a fresh store instance, as another process would read it.
//
// QIM_GROUP_SUITE names the suite per binary (EmbeddedGroupStoreContractTest, ...): ctest knows tests by
// their gtest names, so the binaries must not share them.
#include <gtest/gtest.h>

#ifndef QIM_GROUP_SUITE
#error "define QIM_GROUP_SUITE (the gtest suite name of this backend's binary)"
#endif

#include "groups/tests/group_store_fixture.h"

namespace qim::test {
namespace {

UserId u(const std::string& s) {
  return UserId::parse(s).value();
}

class QIM_GROUP_SUITE : public ::testing::Test {
 protected:
  void SetUp() override {
    GroupFixture f = group_fixture();
    if (auto why = f.unavailable()) GTEST_SKIP() << *why;
    auto h = f.make_harness();
    ASSERT_TRUE(h.ok()) << h.error().to_string();
    harness_ = std::move(h).value();
    reopen();
  }
  void reopen() {
    store_.reset();
    auto s = harness_->open();
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    store_ = std::move(s).value();
  }
  // Applies `op` to `state` and persists the change, as fanout does.
  void apply(GroupState& state, const GroupOp& op, const UserId& actor, uint64_t offset, uint32_t max = 100) {
    GroupChange c = state.apply(op, actor, offset, max);
    auto s = store_->apply(c);
    ASSERT_TRUE(s.ok()) << s.error().to_string();
  }

  std::unique_ptr<GroupHarness> harness_;
  std::unique_ptr<GroupStore> store_;
  GroupId team_ = GroupId::parse("team").value();
};

TEST_F(QIM_GROUP_SUITE, AFreshStoreLoadsWhatAnotherApplied) {
  GroupState g(team_);
  apply(g, GroupOp{GroupOpKind::kCreate, {u("bob"), u("carol")}, "team", GroupRole::kMember}, u("alice"), 3);
  apply(g, GroupOp{GroupOpKind::kRemove, {u("carol")}, {}, GroupRole::kMember}, u("alice"), 8);
  apply(g, GroupOp{GroupOpKind::kAdd, {u("carol"), u("dave")}, {}, GroupRole::kMember}, u("alice"), 11);
  apply(g, GroupOp{GroupOpKind::kSetRole, {u("bob")}, {}, GroupRole::kAdmin}, u("alice"), 12);
  apply(g, GroupOp{GroupOpKind::kRename, {}, "core", GroupRole::kMember}, u("carol"), 13);  // refused
  apply(g, GroupOp{GroupOpKind::kLeave, {}, {}, GroupRole::kMember}, u("dave"), 14);
  reopen();

  auto loaded = store_->load(team_);
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  ASSERT_TRUE(loaded->has_value());
  const GroupState& l = **loaded;
  EXPECT_EQ(l.meta(), g.meta());
  EXPECT_EQ(l.meta()->member_count, 3u);
  EXPECT_EQ(l.meta()->name, "team");
  EXPECT_EQ(l.members(), g.members());
  EXPECT_EQ(l.ops(), g.ops());
  EXPECT_EQ(l.ops().size(), 6u);
  EXPECT_FALSE(l.ops().at(13).applied);
  EXPECT_EQ(l.ops().at(13).refusal, GroupRefusal::kNotAllowed);
  for (uint64_t at : {3u, 5u, 8u, 9u, 11u, 14u, 20u}) EXPECT_EQ(l.members_at(at), g.members_at(at)) << at;
  EXPECT_EQ(l.members_at(9), (std::vector<UserId>{u("alice"), u("bob")}));

  auto carol = store_->member(team_, u("carol"));
  ASSERT_TRUE(carol.ok() && carol->has_value());
  EXPECT_EQ((*carol)->intervals, (std::vector<MemberInterval>{{3, 8}, {11, kOpenInterval}}));
  auto bob = store_->member(team_, u("bob"));
  ASSERT_TRUE(bob.ok() && bob->has_value());
  EXPECT_EQ((*bob)->role, GroupRole::kAdmin);
  EXPECT_FALSE(store_->member(team_, u("mallory")).value().has_value());
  auto refused = store_->outcome(team_, 13);
  ASSERT_TRUE(refused.ok() && refused->has_value());
  EXPECT_EQ((*refused)->refusal, GroupRefusal::kNotAllowed);
  EXPECT_FALSE(store_->outcome(team_, 4).value().has_value());
  auto meta = store_->meta(team_);
  ASSERT_TRUE(meta.ok() && meta->has_value());
  EXPECT_EQ((*meta)->owner, u("alice"));

  // The user -> groups index follows current membership.
  EXPECT_EQ(store_->groups_of(u("carol")).value(), std::vector<GroupId>{team_});
  EXPECT_TRUE(store_->groups_of(u("dave")).value().empty());
  EXPECT_TRUE(store_->groups_of(u("mallory")).value().empty());
  EXPECT_FALSE(store_->load(GroupId::parse("other").value()).value().has_value());
}

TEST_F(QIM_GROUP_SUITE, ApplyingAChangeAgainWritesNothing) {
  GroupState g(team_);
  apply(g, GroupOp{GroupOpKind::kCreate, {u("bob")}, "team", GroupRole::kMember}, u("alice"), 1);
  GroupState stale = g;  // what a second fanout would hold before the remove
  apply(g, GroupOp{GroupOpKind::kRemove, {u("bob")}, {}, GroupRole::kMember}, u("alice"), 2);
  // A change for offset 2 computed from another (stale) state is not written: offset 2 is decided.
  GroupChange other =
      stale.apply(GroupOp{GroupOpKind::kAdd, {u("carol")}, {}, GroupRole::kMember}, u("alice"), 2, 100);
  ASSERT_TRUE(store_->apply(other).ok());
  reopen();
  auto l = store_->load(team_).value();
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->members(), g.members());
  EXPECT_EQ(l->member(u("carol")), nullptr);
  EXPECT_TRUE(store_->groups_of(u("carol")).value().empty());
  EXPECT_TRUE(store_->groups_of(u("bob")).value().empty());
}

// 10,000 members, the default limit (built as fanout would: a create and adds of 500): one load is a
// constant number of reads (RocksDB: meta and two scans; Redis: one pipeline of 3; CQL: 3 pages of 5,000
// rows of one partition), never one per member.
TEST_F(QIM_GROUP_SUITE, TenThousandMembersLoadInAFewReads) {
  GroupState g(team_);
  constexpr int kBatches = 20, kPerBatch = 500;
  for (int batch = 0; batch < kBatches; ++batch) {
    std::vector<UserId> users;
    for (int i = 0; i < kPerBatch; ++i) users.push_back(u("user" + std::to_string(batch * kPerBatch + i)));
    const GroupOpKind kind = batch == 0 ? GroupOpKind::kCreate : GroupOpKind::kAdd;
    apply(g, GroupOp{kind, users, "big", GroupRole::kMember}, u("owner"), 1 + static_cast<uint64_t>(batch),
          20'000);
  }
  reopen();
  const OpCounts before = store_->op_counts();
  auto l = store_->load(team_).value();
  const OpCounts after = store_->op_counts();
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->meta()->member_count, 10'001u);
  EXPECT_EQ(l->members_at(kBatches + 5).size(), 10'001u);
  EXPECT_EQ(l->members_at(1).size(), 501u);
  EXPECT_EQ(l->ops().size(), static_cast<size_t>(kBatches));
  EXPECT_LE((after - before).reads, 3u);  // not one read per member
  EXPECT_EQ(store_->groups_of(u("user9999")).value(), std::vector<GroupId>{team_});
}

TEST_F(QIM_GROUP_SUITE, ARowThatDoesNotDecodeIsCorruptNamingTheGroup) {
  GroupState g(team_);
  apply(g, GroupOp{GroupOpKind::kCreate, {u("bob")}, "team", GroupRole::kMember}, u("alice"), 1);
  ASSERT_TRUE(harness_->plant_corrupt_member(*store_, team_, u("bob")).ok());
  reopen();
  auto l = store_->load(team_);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.code(), Errc::kCorruptEntry);
  EXPECT_NE(l.error().message().find("'team'"), std::string::npos) << l.error().message();
  EXPECT_EQ(store_->member(team_, u("bob")).code(), Errc::kCorruptEntry);
}

// Issue 36, item 1: a user added and removed more often than a member row may hold is refused at the
// bound (GROUP_FULL), so the group written through this backend still loads (a row of more intervals than
// the reader takes made the group unloadable for good).
TEST_F(QIM_GROUP_SUITE, ReAddsPastTheIntervalBoundAreRefusedAndTheGroupStillLoads) {
  GroupState g(team_);
  apply(g, GroupOp{GroupOpKind::kCreate, {}, "team", GroupRole::kMember}, u("alice"), 1);
  // Every change writes its member rows whole, so the last change of bob's row and the refusal after it
  // leave the store as persisting every change would (a synced write each: 2,000 would take seconds).
  uint64_t offset = 2;
  GroupChange last_row, refusal;
  for (uint32_t cycle = 0; cycle < kMaxMemberIntervals + 2; ++cycle) {
    GroupChange add =
        g.apply(GroupOp{GroupOpKind::kAdd, {u("bob")}, {}, GroupRole::kMember}, u("alice"), offset++, 100);
    if (!add.outcome.applied && refusal.offset == 0) refusal = add;
    GroupChange remove =
        g.apply(GroupOp{GroupOpKind::kRemove, {u("bob")}, {}, GroupRole::kMember}, u("alice"), offset++, 100);
    if (!remove.members.empty()) last_row = remove;
  }
  ASSERT_TRUE(store_->apply(last_row).ok());
  ASSERT_TRUE(store_->apply(refusal).ok());
  reopen();
  auto loaded = store_->load(team_);
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  ASSERT_TRUE(loaded->has_value());
  const GroupMemberRecord* bob = (*loaded)->member(u("bob"));
  ASSERT_NE(bob, nullptr);
  EXPECT_EQ(bob->intervals.size(), kMaxMemberIntervals);
  const GroupOpOutcome* refused = (*loaded)->outcome_at(2 + 2 * uint64_t{kMaxMemberIntervals});
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->refusal, GroupRefusal::kFull);
  auto row = store_->member(team_, u("bob"));
  ASSERT_TRUE(row.ok()) << row.error().to_string();
  EXPECT_EQ((*row)->intervals.size(), kMaxMemberIntervals);
}

}  // namespace
}  // namespace qim::test
