// The gateway's push side over real WebSocket connections (issue 8 item 2): each DELIVER says which range
// of the mailbox it completes, and a hole in what the node reported (a skipped range, a range the node or
// the fan-in reports unknown) reaches every live connection of the shard's users as SYNC_NEEDED.
#include <gtest/gtest.h>

#include "gateway/tests/gateway_harness.h"

namespace qim {
namespace {

using namespace std::chrono_literals;
using client::Client;

constexpr const char* kSecret = "push-chain-secret";
constexpr uint32_t kShards = 16;
constexpr auto kWait = 5s;
constexpr auto kQuiet = 300ms;  // how long we wait to see that something does NOT arrive

MailboxSeq seq(uint64_t offset) {
  return compose(Epoch{1}, Offset{offset}).value();
}

class PushChainTest : public testing::GatewayHarness {
 protected:
  PushChainTest() : GatewayHarness(kSecret, kShards) {}
  void SetUp() override {
    start();
    // bob and alice share a shard; carol is on another one.
    for (int i = 0; bob_.empty() || alice_.empty() || carol_.empty(); ++i) {
      const std::string u = "user" + std::to_string(i);
      const ShardId s = shards_.shard_of(*UserId::parse(u));
      if (bob_.empty()) {
        bob_ = u;
        shard_ = s;
      } else if (s == shard_ && alice_.empty()) {
        alice_ = u;
      } else if (s != shard_ && carol_.empty()) {
        carol_ = u;
      }
    }
  }
  std::unique_ptr<Client> login(const std::string& user) { return GatewayHarness::login(user, "d"); }

  MailboxEntry entry(const std::string& user, uint64_t offset) {
    MailboxEntry e;
    e.user = *UserId::parse(user);
    e.seq = seq(offset);
    e.message.id = MessageId{offset};
    e.message.body = "m" + std::to_string(offset);
    return e;
  }

  void report(uint64_t from, uint64_t to, std::vector<MailboxEntry> entries) {
    gateway_->notifier().entries_visible(shard_, from == 0 ? MailboxSeq{} : seq(from), seq(to), entries);
  }

  ShardMap shards_ = ShardMap::create(kShards).value();
  std::string bob_, alice_, carol_;
  ShardId shard_;
};

TEST_F(PushChainTest, EachDeliverSaysWhichRangeOfTheMailboxItCompletes) {
  auto bob = login(bob_);
  report(0, 3, {entry(bob_, 3)});
  auto first = bob->wait_type("DELIVER", kWait);
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  EXPECT_EQ(first->from, 0u);
  EXPECT_EQ(first->frontier, seq(3).raw());
  // Moves without an entry of bob's leave him untouched; his next DELIVER starts where his last ended.
  report(3, 5, {entry(alice_, 5)});
  report(5, 8, {entry(bob_, 7), entry(alice_, 8)});
  auto second = bob->wait_type("DELIVER", kWait);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->from, seq(3).raw());
  EXPECT_EQ(second->frontier, seq(8).raw());
  ASSERT_EQ(second->entries.size(), 1u);
  EXPECT_EQ(second->entries[0].seq, seq(7).raw());
  // A connection registered later starts at the chain's end at its AUTH: its SYNC covers what came before.
  auto alice = login(alice_);
  report(8, 9, {entry(alice_, 9)});
  auto late = alice->wait_type("DELIVER", kWait);
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->from, seq(8).raw());
  EXPECT_EQ(bob->wait_type("SYNC_NEEDED", kQuiet).code(), Errc::kTimeout);
}

TEST_F(PushChainTest, ASkippedRangeSendsSyncNeededToTheShardsUsersOnly) {
  auto bob = login(bob_);
  auto alice = login(alice_);
  auto carol = login(carol_);
  report(0, 2, {entry(bob_, 2)});
  ASSERT_TRUE(bob->wait_type("DELIVER", kWait).ok());
  report(4, 6, {entry(bob_, 6)});  // (2, 4] never reported: its entries were not pushed
  auto needed = bob->wait_type("SYNC_NEEDED", kWait);
  ASSERT_TRUE(needed.ok()) << needed.error().to_string();
  EXPECT_FALSE(needed->reason.empty());
  EXPECT_TRUE(alice->wait_type("SYNC_NEEDED", kWait).ok()) << "alice has no entry here, but may in (2, 4]";
  EXPECT_EQ(carol->wait_type("SYNC_NEEDED", kQuiet).code(), Errc::kTimeout);
  // The push after the hole does not claim to continue bob's last one.
  auto after = bob->wait_type("DELIVER", kWait);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->from, seq(4).raw());
}

TEST_F(PushChainTest, ARangeReportedUnknownSendsSyncNeeded) {
  auto bob = login(bob_);
  report(0, 2, {entry(bob_, 2)});
  ASSERT_TRUE(bob->wait_type("DELIVER", kWait).ok());
  gateway_->notifier().range_unknown(shard_, seq(2), seq(5));
  auto needed = bob->wait_type("SYNC_NEEDED", kWait);
  ASSERT_TRUE(needed.ok()) << needed.error().to_string();
  // The chain goes on from the unknown range's end, with nothing more to signal.
  report(5, 6, {entry(bob_, 6)});
  auto next = bob->wait_type("DELIVER", kWait);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->from, seq(5).raw());
  EXPECT_EQ(bob->wait_type("SYNC_NEEDED", kQuiet).code(), Errc::kTimeout);
}

}  // namespace
}  // namespace qim
