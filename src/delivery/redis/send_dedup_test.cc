// SEND de-duplication across gateways against a real routing Redis (QIM_TEST_ROUTING_REDIS): two gateways
// over one Outbox, each with its own RedisSendDedup (as two processes would have), one shared table.
#include <gtest/gtest.h>

#include <xxhash.h>

#include <future>
#include <thread>

#include "auth/token.h"
#include "delivery/redis/redis_send_dedup.h"
#include "delivery/redis/routing_test_env.h"
#include "gateway/tests/gateway_harness.h"
#include "mailbox/redis/redis_test_env.h"
#include "node/node_test_support.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

constexpr const char* kSecret = "dedup-secret";
constexpr uint32_t kShards = 4;
constexpr auto kWait = 20s;

template <typename F>
bool eventually(F condition, std::chrono::milliseconds wait = kWait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

struct DedupGateway {
  std::unique_ptr<RoutingRedis> redis;
  std::unique_ptr<RedisSendDedup> dedup;
  std::unique_ptr<Gateway> gateway;
};

class SharedSendDedupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    endpoints_ = testing::test_routing_endpoints();
    if (endpoints_.empty()) GTEST_SKIP() << testing::kTestRoutingRedisSkipMessage;
    prefix_ = unique_test_prefix("dedup");
    store_ = testing::open_memory_store(kShards, clock_);
    start(a_, "gw-a");
    start(b_, "gw-b");
  }
  void TearDown() override {
    for (auto* g : {&a_, &b_}) {
      if (g->gateway) g->gateway->stop();
      g->gateway.reset();
      g->dedup.reset();
    }
    if (!prefix_.empty()) (void)delete_test_prefix(endpoints_, prefix_);
  }

  void start(DedupGateway& g, const std::string& id) {
    RoutingOptions ro;
    ro.endpoints = endpoints_;
    ro.key_prefix = prefix_;
    ro.gateway_id = id;
    g.redis = RoutingRedis::create(ro).value();
    g.dedup = std::make_unique<RedisSendDedup>(*g.redis);
    auto [o, d] = testing::gateway_setup(kSecret, outbox_, *store_, clock_, kShards);
    d.send_dedup = g.dedup.get();
    g.gateway = make_gateway(o, d);
    auto st = g.gateway->start();
    ASSERT_TRUE(st.ok()) << st.error().to_string();
  }

  std::unique_ptr<client::Client> login(DedupGateway& g, std::string_view user) {
    auto c = testing::connect_client(*g.gateway, kWait);
    auto token = mint_token(kSecret, *UserId::parse(user), *DeviceId::parse("phone"), 3'600'000, *clock_);
    auto ok = c->auth(*token);
    EXPECT_TRUE(ok.ok()) << ok.error().to_string();
    return c;
  }

  std::vector<std::string> endpoints_;
  std::string prefix_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(1'800'000'000'000);
  std::unique_ptr<MailboxStore> store_;
  testing::FakeLog outbox_{2};
  DedupGateway a_, b_;
};

TEST_F(SharedSendDedupTest, ARetryThroughAnotherGatewayGetsTheSameMessageId) {
  auto via_a = login(a_, "alice");
  auto first = via_a->send("bob", "c1", "hello");
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  EXPECT_FALSE(first->duplicate);
  auto via_b = login(b_, "alice");  // the client lost A and retries through B
  auto retry = via_b->send("bob", "c1", "hello");
  ASSERT_TRUE(retry.ok()) << retry.error().to_string();
  EXPECT_TRUE(retry->duplicate);
  EXPECT_EQ(retry->message_id, first->message_id);
  EXPECT_EQ(retry->server_time, first->server_time);
  EXPECT_EQ(outbox_.total_records(), 1u) << "the retry was appended again";
  // Another sender's same client_msg_id is another message.
  auto carol = login(b_, "carol");
  auto other = carol->send("bob", "c1", "hello");
  ASSERT_TRUE(other.ok()) << other.error().to_string();
  EXPECT_FALSE(other->duplicate);
  EXPECT_NE(other->message_id, first->message_id);
}

TEST_F(SharedSendDedupTest, TheSameKeyWithOtherContentIsRefusedThroughTheOtherGateway) {
  auto via_a = login(a_, "alice");
  ASSERT_TRUE(via_a->send("bob", "c2", "one").ok());
  auto via_b = login(b_, "alice");
  auto other = via_b->send("bob", "c2", "two");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().message().rfind("INVALID_ARGUMENT", 0), 0u) << other.error().message();
  EXPECT_EQ(outbox_.total_records(), 1u);
}

TEST_F(SharedSendDedupTest, ADuplicateWhileTheFirstIsBeingAppendedWaitsForItsOutcome) {
  auto via_a = login(a_, "alice");
  auto via_b = login(b_, "alice");
  outbox_.hold(true);
  auto first = std::async(std::launch::async, [&] { return via_a->send("bob", "c3", "hi"); });
  ASSERT_TRUE(eventually([&] { return outbox_.held() == 1; }));
  auto second = std::async(std::launch::async, [&] { return via_b->send("bob", "c3", "hi"); });
  ASSERT_TRUE(eventually([&] { return b_.dedup->waits() == 1; })) << "the duplicate did not wait";
  EXPECT_EQ(second.wait_for(100ms), std::future_status::timeout) << "answered before the first was durable";
  outbox_.release();
  auto f = first.get();
  auto s = second.get();
  ASSERT_TRUE(f.ok()) << f.error().to_string();
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  EXPECT_EQ(s->message_id, f->message_id);
  EXPECT_TRUE(s->duplicate);
  EXPECT_EQ(outbox_.total_records(), 1u);
}

TEST_F(SharedSendDedupTest, AClaimLeftByAGatewayThatDiedMidAppendExpiresAndTheRetryAppendsAnew) {
  // What a gateway that died after claiming leaves behind: its claim, with a short TTL.
  auto redis = RoutingRedis::create(a_.redis->options()).value();
  const std::string key = SendDedup::key_of(*UserId::parse("alice"), "c4");
  RedisCommand claim{"SET", redis->keys().send(key), "Pgw-dead:1", "PX", "400"};
  ASSERT_TRUE(redis->run(XXH3_64bits(key.data(), key.size()) % redis->size(), std::span(&claim, 1)).ok());
  auto via_b = login(b_, "alice");
  auto waited = via_b->send("bob", "c4", "hi");
  ASSERT_FALSE(waited.ok()) << "answered while the claim stood";
  EXPECT_EQ(waited.error().message().rfind("UNAVAILABLE", 0), 0u) << waited.error().message();
  EXPECT_EQ(b_.dedup->claims_expired(), 1u);
  EXPECT_EQ(outbox_.total_records(), 0u);
  auto retry = via_b->send("bob", "c4", "hi");
  ASSERT_TRUE(retry.ok()) << retry.error().to_string();
  EXPECT_FALSE(retry->duplicate);
  EXPECT_EQ(outbox_.total_records(), 1u);
  // From now on it is a duplicate through either gateway.
  auto via_a = login(a_, "alice");
  auto again = via_a->send("bob", "c4", "hi");
  ASSERT_TRUE(again.ok()) << again.error().to_string();
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(again->message_id, retry->message_id);
}

}  // namespace
}  // namespace qim
