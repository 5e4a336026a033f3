// The distributed SignalBus against a real routing Redis (QIM_TEST_ROUTING_REDIS): two gateways, each
// with its GatewayRouting and a RedisSignalBus, and a bus of a process without a gateway (a MailboxNode's).
// What must hold: a signal reaches every live connection of its users on whichever gateway holds them,
// and nothing else; the except connection is honoured on the sender's gateway only.
#include <gtest/gtest.h>

#include "auth/token.h"
#include "delivery/redis/gateway_routing.h"
#include "delivery/redis/redis_signal_bus.h"
#include "delivery/redis/routing_test_env.h"
#include "gateway/tests/gateway_harness.h"
#include "mailbox/redis/redis_test_env.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

constexpr const char* kSecret = "signal-secret";
constexpr uint32_t kShards = 4;

struct TestGateway {
  std::unique_ptr<GatewayRouting> routing;
  std::unique_ptr<RedisSignalBus> bus;
  std::unique_ptr<Gateway> gateway;
};

class SignalBusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    endpoints_ = testing::test_routing_endpoints();
    if (endpoints_.empty()) GTEST_SKIP() << testing::kTestRoutingRedisSkipMessage;
    prefix_ = unique_test_prefix("signals");
    StoreOptions so;
    so.backend = "memory";
    so.clock = clock_;
    so.shard_count = kShards;
    store_ = std::move(open_mailbox_store(so)).value();
    start_gateway(a_, "gw-a");
    start_gateway(b_, "gw-b");
  }
  void TearDown() override {
    for (auto* g : {&a_, &b_}) {
      if (g->gateway) g->gateway->stop();
      if (g->routing) g->routing->stop();
      g->bus.reset();
    }
    if (!prefix_.empty()) (void)delete_test_prefix(endpoints_, prefix_);
  }

  RoutingOptions routing_options(const std::string& id) {
    RoutingOptions o;
    o.endpoints = endpoints_;
    o.key_prefix = prefix_;
    o.gateway_id = id;
    return o;
  }

  void start_gateway(TestGateway& g, const std::string& id) {
    auto routing = GatewayRouting::create(routing_options(id), kShards);
    ASSERT_TRUE(routing.ok()) << routing.error().to_string();
    g.routing = std::move(routing).value();
    g.bus = std::make_unique<RedisSignalBus>(g.routing->redis(), id);
    auto [o, d] = testing::gateway_setup(kSecret, outbox_, *store_, clock_, kShards);
    d.routes = &g.routing->registrar();
    d.signals = g.bus.get();
    g.gateway = make_gateway(o, d);
    ASSERT_TRUE(g.routing->start(g.gateway->notifier(), &g.gateway->signal_sink()).ok());
    ASSERT_TRUE(g.gateway->start().ok());
  }

  std::unique_ptr<client::Client> login(TestGateway& g, std::string_view user) {
    auto c = testing::connect_client(*g.gateway, 10s);
    auto token = mint_token(kSecret, *UserId::parse(user), *DeviceId::parse("d"), 3'600'000, *clock_);
    auto ok = c->auth(*token);
    EXPECT_TRUE(ok.ok()) << ok.error().to_string();
    return c;
  }

  static bool got(client::Client& c, std::string_view marker, std::chrono::milliseconds wait = 10s) {
    return c
        .wait_for([&](const client::ServerFrame& f) { return f.raw.find(marker) != std::string::npos; }, wait)
        .ok();
  }

  std::vector<std::string> endpoints_;
  std::string prefix_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(1'800'000'000'000);
  testing::FakeLog outbox_{4};
  std::unique_ptr<MailboxStore> store_;
  TestGateway a_, b_;
};

std::string frame(std::string_view marker) {
  return "{\"type\":\"TYPING\",\"conversation\":\"d:a:b\",\"user\":\"" + std::string(marker) +
         "\",\"state\":\"start\",\"expires_in_ms\":6000}";
}

TEST_F(SignalBusTest, ReachesTheUsersConnectionsOnEveryGatewayAndNobodyElse) {
  auto bob_on_a = login(a_, "bob");
  auto bob_on_b = login(b_, "bob");
  auto carol_on_b = login(b_, "carol");
  std::vector<UserId> bob{*UserId::parse("bob")};
  a_.bus->send(bob, frame("m1"));
  EXPECT_TRUE(got(*bob_on_a, "m1"));
  EXPECT_TRUE(got(*bob_on_b, "m1"));
  EXPECT_FALSE(got(*carol_on_b, "m1", 300ms));
  // A user without a live connection anywhere: nothing published for them, nothing fails.
  std::vector<UserId> nobody{*UserId::parse("zed")};
  a_.bus->send(nobody, frame("m2"));
  a_.bus->flush();
  EXPECT_EQ(a_.bus->unpublished(), 0u);
}

TEST_F(SignalBusTest, ABusWithoutAGatewayReachesThemToo) {
  // What a MailboxNode process makes (the DELIVERED signal of the inbox).
  auto bus = RedisSignalBus::create(routing_options("node"));
  ASSERT_TRUE(bus.ok()) << bus.error().to_string();
  auto carol_on_a = login(a_, "carol");
  auto carol_on_b = login(b_, "carol");
  std::vector<UserId> carol{*UserId::parse("carol")};
  (*bus)->send(carol, frame("from-node"));
  EXPECT_TRUE(got(*carol_on_a, "from-node"));
  EXPECT_TRUE(got(*carol_on_b, "from-node"));
}

TEST_F(SignalBusTest, TheExceptConnectionIsTheSendersGatewaysOnly) {
  // Connection ids are per gateway: the first connection of each gateway has id 1. A signal sent on A
  // except A's connection 1 must still reach B's connection 1.
  auto dave_on_a = login(a_, "dave");  // A's first connection
  auto dave_on_b = login(b_, "dave");  // B's first connection
  std::vector<UserId> dave{*UserId::parse("dave")};
  a_.bus->send(dave, frame("except"), 1);
  EXPECT_TRUE(got(*dave_on_b, "except"));
  EXPECT_FALSE(got(*dave_on_a, "except", 300ms));
}

}  // namespace
}  // namespace qim
