// MailboxNode's runtime ownership: add_shard / remove_shard on a started node, each shard at its own epoch.
#include <gtest/gtest.h>

#include <thread>

#include "log/testing/temp_dir.h"
#include "log/testing/test_log.h"
#include "mailbox/message_codec.h"
#include "node/mailbox_node.h"
#include "node/node_test_support.h"
#include "node/quarantine.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kShards = 4;
constexpr int64_t kServerTimeMs = 1'700'000'000'000;

class NodeShardsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = testing::open_test_log(dir_.sub("mailbox-log"), kShards, "mailbox");
    quarantine_log_ = testing::open_test_log(dir_.sub("quarantine-log"), kQuarantinePartitions, "quarantine");
    store_ = testing::open_memory_store(kShards, std::make_shared<ManualClock>(kServerTimeMs));
    std::tie(a_, b_) = testing::two_users_of_shard_zero(shards_);
  }
  NodeOptions options() {
    NodeOptions o;
    o.leased = true;
    o.poll_wait = 5ms;
    o.retry_min = 1ms;
    o.retry_max = 10ms;
    o.quarantine = quarantine_log_.get();
    return o;
  }
  void dispatch(int n) {
    ASSERT_TRUE(
        log_->append_sync(0, "",
                          encode_dispatch_record(testing::message_record(shards_, a_, b_, n, kServerTimeMs)))
            .ok());
  }

  testing::TempDir dir_;
  ShardMap shards_ = ShardMap::create(kShards).value();
  std::unique_ptr<EmbeddedLog> log_;
  std::unique_ptr<EmbeddedLog> quarantine_log_;
  std::unique_ptr<MailboxStore> store_;
  UserId a_, b_;
};

TEST_F(NodeShardsTest, ALeasedNodeStartsWithNoShardAndRefusesBadAdds) {
  MailboxNode node(*log_, *store_, nullptr, options());
  EXPECT_EQ(node.add_shard(ShardId{0}, Epoch{1}).code(), Errc::kInvariant);  // not started
  ASSERT_TRUE(node.start().ok());
  EXPECT_TRUE(node.owned().empty());
  EXPECT_EQ(node.add_shard(ShardId{0}, Epoch{0}).code(), Errc::kInvalidArgument);
  EXPECT_EQ(node.add_shard(ShardId{0}, Epoch{kMaxEpoch + 1}).code(), Errc::kInvalidArgument);
  EXPECT_EQ(node.add_shard(ShardId{kShards}, Epoch{1}).code(), Errc::kInvalidArgument);
  ASSERT_TRUE(node.add_shard(ShardId{0}, Epoch{1}).ok());
  EXPECT_EQ(node.add_shard(ShardId{0}, Epoch{2}).code(), Errc::kInvariant);  // owned already
  EXPECT_EQ(node.remove_shard(ShardId{1}, MailboxNode::Removal::kGraceful).code(), Errc::kNotFound);
  node.stop();
  EXPECT_EQ(node.add_shard(ShardId{1}, Epoch{1}).code(), Errc::kInvariant);  // stopped
  // Removing a shard of a stopped node does not wait out the drain limit (it would end in Timeout): its
  // worker has ended.
  EXPECT_TRUE(node.remove_shard(ShardId{0}, MailboxNode::Removal::kGraceful, 100ms).ok());
  EXPECT_TRUE(node.owned().empty());
}

TEST_F(NodeShardsTest, ShardsMoveBetweenEpochsWithAGracefulRemovalAndFailClosedBelowTheStore) {
  MailboxNode node(*log_, *store_, nullptr, options());
  ASSERT_TRUE(node.start().ok());
  ASSERT_TRUE(node.add_shard(ShardId{0}, Epoch{3}).ok());
  ASSERT_TRUE(node.add_shard(ShardId{2}, Epoch{5}).ok());
  for (int i = 0; i < 10; ++i) dispatch(i);
  // Graceful: everything the log held at the call is finished and the position committed.
  ASSERT_TRUE(node.remove_shard(ShardId{0}, MailboxNode::Removal::kGraceful, 30s).ok());
  EXPECT_EQ(testing::shard_zero_frontier(*store_), compose(Epoch{3}, Offset{9}).value());
  EXPECT_EQ(log_->committed(kMailboxGroup, 0)->value(), Offset{10});
  ASSERT_EQ(node.owned().size(), 1u);
  EXPECT_EQ(node.owned()[0], std::make_pair(ShardId{2}, Epoch{5}));
  EXPECT_EQ(node.metrics().size(), 1u);

  // The store now holds epoch 3: a lower epoch fails closed, a higher one continues the chain.
  EXPECT_EQ(node.add_shard(ShardId{0}, Epoch{2}).code(), Errc::kEpochAhead);
  ASSERT_TRUE(node.add_shard(ShardId{0}, Epoch{4}).ok());
  for (int i = 10; i < 15; ++i) dispatch(i);
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (testing::shard_zero_frontier(*store_) != compose(Epoch{4}, Offset{14}).value()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline)
        << testing::shard_zero_frontier(*store_).to_string();
    std::this_thread::sleep_for(2ms);
  }
  const auto entries = testing::read_whole_mailbox(*store_, b_);
  ASSERT_EQ(entries.size(), 15u);
  EXPECT_EQ(entries[9].seq, compose(Epoch{3}, Offset{9}).value());
  EXPECT_EQ(entries[10].seq, compose(Epoch{4}, Offset{10}).value());
  EXPECT_FALSE(node.fatal().has_value());
}

TEST_F(NodeShardsTest, ALapsedLeaseStopsTheShardsWritesButNotTheNode) {
  std::atomic<bool> valid{true};
  std::optional<Error> process_fatal;
  NodeOptions o = options();
  o.on_fatal = [&](const Error& e) { process_fatal = e; };
  MailboxNode node(*log_, *store_, nullptr, o);
  ASSERT_TRUE(node.start().ok());
  ASSERT_TRUE(node.add_shard(ShardId{0}, Epoch{1}, [&] { return valid.load(); }).ok());
  dispatch(0);
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (testing::shard_zero_frontier(*store_).is_zero()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    std::this_thread::sleep_for(2ms);
  }
  valid = false;
  dispatch(1);
  while (!node.shard_error(ShardId{0})) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    std::this_thread::sleep_for(2ms);
  }
  EXPECT_TRUE(is_lease_lapsed(*node.shard_error(ShardId{0}))) << node.shard_error(ShardId{0})->to_string();
  EXPECT_EQ(testing::shard_zero_frontier(*store_),
            compose(Epoch{1}, Offset{0}).value());  // record 1: not written
  EXPECT_EQ(testing::read_whole_mailbox(*store_, b_).size(), 1u);
  EXPECT_FALSE(node.fatal().has_value());
  ASSERT_TRUE(node.remove_shard(ShardId{0}, MailboxNode::Removal::kImmediate).ok());
  node.stop();
  EXPECT_FALSE(process_fatal.has_value());
}

}  // namespace
}  // namespace qim
