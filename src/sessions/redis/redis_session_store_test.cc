// The routing-Redis SessionStore (QIM_TEST_ROUTING_REDIS; skipped when unset): what every gateway of a
// distributed deployment reads at AUTH and in its catch-up rounds.
#include "sessions/redis/redis_session_store.h"

#include <gtest/gtest.h>

#include "delivery/redis/routing_test_env.h"
#include "mailbox/redis/redis_test_env.h"

namespace qim {
namespace {

class RedisSessionStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto endpoints = testing::test_routing_endpoints();
    if (endpoints.empty()) GTEST_SKIP() << testing::kTestRoutingRedisSkipMessage;
    options_.endpoints = endpoints;
    options_.key_prefix = unique_test_prefix("sessions");
    options_.gateway_id = "gw-s";
    redis_ = std::move(RoutingRedis::create(options_)).value();
    store_ = std::make_unique<RedisSessionStore>(*redis_, "gw-s");
  }
  RoutingOptions options_;
  std::unique_ptr<RoutingRedis> redis_;
  std::unique_ptr<RedisSessionStore> store_;
  const UserId alice_ = *UserId::parse("alice");
  const DeviceId phone_ = *DeviceId::parse("phone");
};

TEST_F(RedisSessionStoreTest, MarksAreRaisedOnlyAndSeenByAnotherProcess) {
  ASSERT_TRUE(store_->revoke(alice_, phone_, 1'000).ok());
  ASSERT_TRUE(store_->revoke(alice_, phone_, 900).ok());
  ASSERT_TRUE(store_->revoke(alice_, std::nullopt, 500).ok());
  auto other = RedisSessionStore::create(options_);  // another gateway's view
  ASSERT_TRUE(other.ok());
  auto m = (*other)->marks(alice_);
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->not_before(phone_), 1'000);
  EXPECT_EQ(m->not_before(*DeviceId::parse("laptop")), 500);
  EXPECT_TRUE((*other)->marks(*UserId::parse("bob"))->empty());
}

TEST_F(RedisSessionStoreTest, ChangesSinceACursorNameTheUsersRevokedAfterIt) {
  auto start = store_->changes_since(std::nullopt);
  ASSERT_TRUE(start.ok());
  EXPECT_TRUE(start->users.empty());
  ASSERT_TRUE(store_->revoke(alice_, phone_, 1).ok());
  ASSERT_TRUE(store_->revoke(*UserId::parse("bob"), std::nullopt, 1).ok());
  auto changes = store_->changes_since(start->cursor);
  ASSERT_TRUE(changes.ok());
  EXPECT_TRUE(changes->complete);
  EXPECT_EQ(changes->cursor, start->cursor + 2);
  ASSERT_EQ(changes->users.size(), 2u);
  EXPECT_EQ(changes->users[0].str(), "alice");
  EXPECT_EQ(changes->users[1].str(), "bob");
  EXPECT_TRUE(store_->changes_since(changes->cursor)->users.empty());
  // A cursor ahead of the counter: the instance forgot (restarted empty): check everybody.
  EXPECT_FALSE(store_->changes_since(changes->cursor + 100)->complete);
}

TEST_F(RedisSessionStoreTest, DevicesCountLiveConnectionsOfLiveGatewaysOnly) {
  store_->connection_opened(alice_, phone_, 10);
  store_->connection_opened(alice_, phone_, 20);
  store_->connection_closed(alice_, phone_);
  // No gateway registered as live yet: the connection is not counted, its last AUTH is.
  auto devices = store_->devices(alice_);
  ASSERT_TRUE(devices.ok()) << devices.error().to_string();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].last_auth_ms, 20);
  EXPECT_EQ((*devices)[0].live, 0u);
  const RedisCommand live{"ZADD", redis_->keys().gateways(), std::to_string(routing_now_ms() + 60'000),
                          "gw-s"};
  ASSERT_TRUE(redis_->run(redis_->instance_of_user(alice_), {&live, 1}).ok());
  devices = store_->devices(alice_);
  ASSERT_TRUE(devices.ok());
  EXPECT_EQ((*devices)[0].live, 1u);
}

}  // namespace
}  // namespace qim
