// HISTORY of a group (gateway/group_history.h) over the real embedded stores: the archive holds messages
// fanout delivered to nobody (a removed member's SEND that raced the removal); a member reads exactly what
// fanout delivered, from when they joined, paging on past what is dropped.
#include "gateway/group_history.h"

#include <gtest/gtest.h>

#include "archiver/rocks_history_store.h"
#include "groups/embedded/rocks_group_store.h"
#include "log/testing/temp_dir.h"

namespace qim {
namespace {

UserId u(const std::string& s) {
  return UserId::parse(s).value();
}

class GroupHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    history_ = RocksHistoryStore::open(dir_.sub("history")).value();
    groups_ = RocksGroupStore::open(dir_.sub("groups")).value();
  }
  void apply(const GroupOp& op, const std::string& actor, uint64_t offset) {
    ASSERT_TRUE(groups_->apply(state_.apply(op, u(actor), offset, 100)).ok());
  }
  // A message of the group at `offset` of partition 3, as the archiver stores it.
  void archive(const std::string& sender, uint64_t offset) {
    Message m;
    m.id = MessageId{(uint64_t{3} << 48) | offset};
    m.conversation = conversation_;
    m.sender = u(sender);
    m.sender_device = DeviceId::parse("d1").value();
    m.client_msg_id = "c" + std::to_string(offset);
    m.body = sender + "@" + std::to_string(offset);
    ASSERT_TRUE(history_->append(m).ok());
  }
  std::vector<std::string> bodies(const HistoryPage& page) {
    std::vector<std::string> out;
    for (const auto& m : page.messages) out.push_back(m.body);
    return out;
  }
  Result<HistoryPage> read(uint32_t limit, uint64_t joined, std::optional<MessageId> before = {}) {
    return read_group_history(*history_, *groups_, group_, HistoryQuery{conversation_, before, limit},
                              joined);
  }

  testing::TempDir dir_;
  std::unique_ptr<RocksHistoryStore> history_;
  std::unique_ptr<RocksGroupStore> groups_;
  GroupId group_ = GroupId::parse("team").value();
  ConversationId conversation_ = ConversationId::parse("g:team").value();
  GroupState state_{group_};
};

TEST_F(GroupHistoryTest, AMessageFanoutDeliveredToNobodyIsNotShownAndPagingGoesOnPastIt) {
  apply(GroupOp{GroupOpKind::kCreate, {u("bob"), u("carol")}, "team", GroupRole::kMember}, "alice", 1);
  archive("bob", 2);
  archive("carol", 3);
  apply(GroupOp{GroupOpKind::kRemove, {u("bob")}, {}, GroupRole::kMember}, "alice", 4);
  // bob's SENDs passed the gateway's check before his removal was applied: archived, delivered to nobody.
  for (uint64_t o = 5; o < 9; ++o) archive("bob", o);
  archive("alice", 9);
  archive("dave", 10);  // never a member at all

  auto all = read(50, 1);
  ASSERT_TRUE(all.ok()) << all.error().to_string();
  EXPECT_EQ(bodies(*all), (std::vector<std::string>{"alice@9", "carol@3", "bob@2"}));
  EXPECT_FALSE(all->more);

  // Pages of 1: each a message the member may read, the dropped ones skipped within the same request.
  auto first = read(1, 1);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(bodies(*first), (std::vector<std::string>{"alice@9"}));
  EXPECT_TRUE(first->more);
  auto second = read(1, 1, first->messages.back().id);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(bodies(*second), (std::vector<std::string>{"carol@3"}));

  // A member who joined at 3 reads nothing older.
  auto late = read(50, 3);
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(bodies(*late), (std::vector<std::string>{"alice@9", "carol@3"}));
  EXPECT_FALSE(late->more);
}

TEST_F(GroupHistoryTest, AMemberWhoLeftAndCameBackIsShownOnlyWhileAMember) {
  apply(GroupOp{GroupOpKind::kCreate, {u("bob")}, "team", GroupRole::kMember}, "alice", 1);
  archive("bob", 2);
  apply(GroupOp{GroupOpKind::kLeave, {}, {}, GroupRole::kMember}, "bob", 3);
  archive("bob", 4);  // raced his own leave
  apply(GroupOp{GroupOpKind::kAdd, {u("bob")}, {}, GroupRole::kMember}, "alice", 5);
  archive("bob", 6);
  auto page = read(50, 1);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(bodies(*page), (std::vector<std::string>{"bob@6", "bob@2"}));
}

TEST_F(GroupHistoryTest, AReadThatStopsAfterFilteredPagesSaysWhereToPageOnFrom) {
  apply(GroupOp{GroupOpKind::kCreate, {u("bob")}, "team", GroupRole::kMember}, "alice", 1);
  archive("alice", 2);
  apply(GroupOp{GroupOpKind::kRemove, {u("bob")}, {}, GroupRole::kMember}, "alice", 3);
  // More of bob's raced SENDs than one request reads (16 pages of 1): delivered to nobody.
  for (uint64_t o = 4; o < 40; ++o) archive("bob", o);

  // The request ends with nothing to show but more to read: it names where to go on from, and a client
  // paging on from there reaches alice's message.
  std::optional<MessageId> before;
  std::vector<std::string> seen;
  for (int requests = 0; requests < 10; ++requests) {
    auto page = read(1, 1, before);
    ASSERT_TRUE(page.ok()) << page.error().to_string();
    for (const auto& b : bodies(*page)) seen.push_back(b);
    if (!page->more) break;
    ASSERT_TRUE(page->next_before.has_value() || !page->messages.empty())
        << "more=true with no message and no position to page on from";
    before = page->next_before ? page->next_before : page->messages.back().id;
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"alice@2"}));
}

}  // namespace
}  // namespace qim
