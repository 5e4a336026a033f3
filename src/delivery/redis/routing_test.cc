// Delivery across gateways, in one process against a real routing Redis (QIM_TEST_ROUTING_REDIS): a
// MailboxNode whose notifier is the RoutedNotifier, two gateways (each with its GatewayRouting: route
// registrar + channel subscription) over one mailbox store, and clients running the client library's
// delivery loop (client::MailboxFollower). What must hold: a frontier move reaches exactly the gateways
// holding the users concerned; each gateway's chains stay contiguous across ranges that concerned only
// the other; whatever the routing layer loses (a dropped subscription, a restarted routing Redis) ends
// in SYNC_NEEDED and every entry shown exactly once.
#include <gtest/gtest.h>

#include <thread>

#include "auth/token.h"
#include "client/mailbox_feed.h"
#include "delivery/redis/gateway_routing.h"
#include "delivery/redis/routed_notifier.h"
#include "delivery/redis/routing_test_env.h"
#include "gateway/tests/gateway_harness.h"
#include "log/testing/temp_dir.h"
#include "log/testing/test_log.h"
#include "mailbox/message_codec.h"
#include "mailbox/redis/redis_test_env.h"
#include "node/mailbox_node.h"
#include "node/node_test_support.h"
#include "node/quarantine.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

constexpr const char* kSecret = "routing-secret";
constexpr uint32_t kShards = 4;
constexpr auto kWait = 20s;
constexpr auto kQuiet = 300ms;  // how long we wait to see that nothing more is shown

struct TestGateway {
  std::unique_ptr<GatewayRouting> routing;
  std::unique_ptr<Gateway> gateway;
  RouteSubscriber& subscriber() { return *routing->subscriber(); }
};

template <typename F>
bool eventually(F condition, std::chrono::milliseconds wait = kWait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

class RoutingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    endpoints_ = testing::test_routing_endpoints();
    if (endpoints_.empty()) GTEST_SKIP() << testing::kTestRoutingRedisSkipMessage;
    prefix_ = unique_test_prefix("routing");
    log_ = testing::open_test_log(dir_.sub("mailbox-log"), kShards, "mailbox");
    quarantine_log_ = testing::open_test_log(dir_.sub("quarantine-log"), kQuarantinePartitions, "quarantine");
    store_ = testing::open_memory_store(kShards, clock_);
    auto users = testing::users_of_shard_zero(shards_, 3);
    alice_ = users[0];
    bob_ = users[1];
    carol_ = users[2];
  }
  void TearDown() override {
    if (node_) node_->stop();
    node_.reset();
    routed_.reset();
    for (auto* g : {&a_, &b_}) {
      if (g->gateway) g->gateway->stop();
      if (g->routing) g->routing->stop();
    }
    if (!prefix_.empty()) (void)delete_test_prefix(endpoints_, prefix_);
  }

  RoutingOptions routing_options(const std::string& id) {
    RoutingOptions o;
    o.endpoints = endpoints_;
    o.key_prefix = prefix_;
    o.gateway_id = id;
    o.route_ttl = ttl_;
    return o;
  }

  void start_gateway(TestGateway& g, const std::string& id, GatewayRoutingOptions extra = {}) {
    auto routing = GatewayRouting::create(routing_options(id), kShards, std::move(extra));
    ASSERT_TRUE(routing.ok()) << routing.error().to_string();
    g.routing = std::move(routing).value();
    auto [o, d] = testing::gateway_setup(kSecret, outbox_, *store_, clock_, kShards);
    d.routes = &g.routing->registrar();
    g.gateway = make_gateway(o, d);
    auto st = g.routing->start(g.gateway->notifier());
    ASSERT_TRUE(st.ok()) << st.error().to_string();
    ASSERT_TRUE(g.gateway->start().ok());
  }

  void start_node() {
    auto redis = RoutingRedis::create(routing_options("node"));
    ASSERT_TRUE(redis.ok()) << redis.error().to_string();
    node_redis_ = std::move(redis).value();
    RoutedNotifierOptions ro;
    ro.retry_interval = 100ms;
    routed_ = std::make_unique<RoutedNotifier>(*node_redis_, ro);
    NodeOptions no;
    no.shards = {ShardId{0}};
    no.epoch = Epoch{1};
    no.quarantine = quarantine_log_.get();
    no.poll_wait = 5ms;
    no.retry_min = 1ms;
    no.retry_max = 5ms;
    node_ = std::make_unique<MailboxNode>(*log_, *store_, routed_.get(), no);
    ASSERT_TRUE(node_->start().ok());
  }

  std::unique_ptr<client::Client> login(TestGateway& g, const UserId& user) {
    auto c = testing::connect_client(*g.gateway, kWait);
    auto token = mint_token(kSecret, user, *DeviceId::parse("d"), 3'600'000, *clock_);
    auto ok = c->auth(*token);
    EXPECT_TRUE(ok.ok()) << ok.error().to_string();
    return c;
  }
  std::unique_ptr<client::MailboxFollower> follow(client::Client& c) {
    auto f = std::make_unique<client::MailboxFollower>(c, client::MailboxFeed::Options{});
    f->start();
    while (f->feed().syncing()) {
      auto r = f->next(kWait);
      EXPECT_TRUE(r.ok()) << r.error().to_string();
      if (!r.ok()) break;
    }
    return f;
  }

  // Message n from `from` to `to` (n unique per test: it is the record's Outbox offset); waits until the
  // node moved the frontier over it, so each message is a range of its own.
  void send(const UserId& from, const UserId& to, int n) {
    const auto record = testing::message_record(shards_, from, to, n, clock_->now_ms());
    ASSERT_TRUE(log_->append_sync(0, "", encode_dispatch_record(record)).ok());
    ++sent_;
    ASSERT_TRUE(eventually([&] { return total(node_->metrics()).advanced >= sent_; }));
  }

  static std::vector<std::string> shown(client::MailboxFollower& f, size_t n,
                                        std::chrono::milliseconds wait = kWait) {
    std::vector<std::string> bodies;
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (bodies.size() < n && std::chrono::steady_clock::now() < deadline) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      auto r = f.next(left);
      if (!r.ok() && r.error().code() == Errc::kTimeout) break;
      EXPECT_TRUE(r.ok()) << r.error().to_string();
      if (!r.ok()) break;
      for (const auto& e : *r) bodies.push_back(e.body);
    }
    return bodies;
  }
  static std::vector<std::string> bodies(std::initializer_list<int> ns) {
    std::vector<std::string> out;
    for (int n : ns) out.push_back("message " + std::to_string(n));
    return out;
  }
  static std::vector<std::string> bodies_range(int from, int to) {
    std::vector<std::string> out;
    for (int n = from; n < to; ++n) out.push_back("message " + std::to_string(n));
    return out;
  }

  // What the routing Redis says about `user`'s live routes (a fresh connection, not the gateways').
  std::vector<std::string> routes_of(const UserId& user) {
    auto redis = RoutingRedis::create(routing_options("reader")).value();
    RedisCommand cmd{"ZRANGEBYSCORE", redis->keys().route(user), std::to_string(routing_now_ms()), "+inf"};
    auto r = redis->run(redis->instance_of_user(user), std::span(&cmd, 1));
    EXPECT_TRUE(r.ok()) << r.error().to_string();
    std::vector<std::string> out;
    if (r.ok())
      for (const auto& e : r->front().elements) out.push_back(e.str);
    return out;
  }

  std::vector<std::string> endpoints_;
  std::string prefix_;
  std::chrono::milliseconds ttl_{3000};
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(1'800'000'000'000);
  testing::TempDir dir_;
  ShardMap shards_ = ShardMap::create(kShards).value();
  std::unique_ptr<EmbeddedLog> log_, quarantine_log_;
  std::unique_ptr<MailboxStore> store_;
  testing::FakeLog outbox_{2};
  std::unique_ptr<RoutingRedis> node_redis_;
  std::unique_ptr<RoutedNotifier> routed_;
  std::unique_ptr<MailboxNode> node_;
  TestGateway a_, b_;
  UserId alice_, bob_, carol_;
  uint64_t sent_ = 0;
};

TEST_F(RoutingTest, AFrontierMoveReachesOnlyTheGatewayHoldingTheUser) {
  start_gateway(a_, "gw-a");
  start_gateway(b_, "gw-b");
  start_node();
  auto bob = login(b_, bob_);
  auto follower = follow(*bob);
  EXPECT_EQ(routes_of(bob_), std::vector<std::string>{"gw-b"});
  send(alice_, bob_, 1);  // alice (connected nowhere) and bob have an entry each
  EXPECT_EQ(shown(*follower, 1), bodies({1}));
  EXPECT_EQ(follower->feed().sync_runs(), 1u) << "pushed, not found by a SYNC";
  routed_->flush();
  EXPECT_GE(b_.subscriber().received(), 1u);
  EXPECT_EQ(a_.subscriber().received(), 0u) << "gateway A holds nobody concerned";
}

TEST_F(RoutingTest, EachGatewayGetsItsUsersEntriesAndItsChainsStayContiguous) {
  start_gateway(a_, "gw-a");
  start_gateway(b_, "gw-b");
  start_node();
  auto alice = login(a_, alice_);
  auto bob = login(b_, bob_);
  auto fa = follow(*alice);
  auto fb = follow(*bob);
  std::vector<std::string> for_alice, for_bob;
  for (int n = 0; n < 24; ++n) {
    // Ranges for A only, for B only, and for both: each gateway misses ranges the other got.
    const int kind = n % 3;
    if (kind == 0) send(carol_, alice_, n);
    if (kind == 1) send(carol_, bob_, n);
    if (kind == 2) send(alice_, bob_, n);
    if (kind != 1) for_alice.push_back("message " + std::to_string(n));
    if (kind != 0) for_bob.push_back("message " + std::to_string(n));
  }
  EXPECT_EQ(shown(*fa, for_alice.size()), for_alice);
  EXPECT_EQ(shown(*fb, for_bob.size()), for_bob);
  EXPECT_TRUE(shown(*fa, 1, kQuiet).empty()) << "alice was shown an entry twice";
  EXPECT_TRUE(shown(*fb, 1, kQuiet).empty()) << "bob was shown an entry twice";
  // Contiguous: no DELIVER left a hole, nobody was told to SYNC, nothing came by SYNC after the first.
  EXPECT_EQ(fa->feed().gaps(), 0u);
  EXPECT_EQ(fb->feed().gaps(), 0u);
  EXPECT_EQ(fa->feed().sync_runs(), 1u);
  EXPECT_EQ(fb->feed().sync_runs(), 1u);
  routed_->flush();
  EXPECT_LE(a_.subscriber().received(), for_alice.size()) << "A got ranges that concerned only B";
  EXPECT_LE(b_.subscriber().received(), for_bob.size()) << "B got ranges that concerned only A";
}

TEST_F(RoutingTest, ADroppedSubscriptionEndsInSyncNeededAndEveryEntryShownOnce) {
  start_gateway(a_, "gw-a");
  GatewayRoutingOptions slow;
  slow.subscriber.reconnect_backoff = 1500ms;  // long enough for publications to go unheard
  start_gateway(b_, "gw-b", slow);
  start_node();
  auto bob = login(b_, bob_);
  auto follower = follow(*bob);
  for (int n = 0; n < 5; ++n) send(alice_, bob_, n);
  EXPECT_EQ(shown(*follower, 5), bodies_range(0, 5));
  ASSERT_EQ(follower->feed().gaps(), 0u);

  // Kill gateway B's subscription connection on its routing instance.
  auto redis = RoutingRedis::create(routing_options("killer")).value();
  const size_t instance = redis->instance_of_gateway("gw-b");
  RedisCommand kill{"CLIENT", "KILL", "TYPE", "pubsub", "SKIPME", "yes"};
  RedisCommand list{"CLIENT", "LIST", "TYPE", "pubsub"};
  auto clients = redis->run(instance, std::span(&list, 1));
  ASSERT_TRUE(clients.ok());
  std::string id;
  for (size_t at = 0; (at = clients->front().str.find("id=", at)) != std::string::npos; ++at) {
    const size_t eol = clients->front().str.find('\n', at);
    const std::string line = clients->front().str.substr(at, eol - at);
    if (line.find("name=qim-sub-gw-b ") != std::string::npos) id = line.substr(3, line.find(' ') - 3);
  }
  ASSERT_FALSE(id.empty()) << "gateway B's subscription not found in CLIENT LIST";
  kill = {"CLIENT", "KILL", "ID", id};
  ASSERT_TRUE(redis->run(instance, std::span(&kill, 1)).ok());
  ASSERT_TRUE(eventually([&] { return !b_.subscriber().subscribed(); }));

  for (int n = 5; n < 10; ++n) send(alice_, bob_, n);  // published while nobody listens on B's channel
  routed_->flush();
  EXPECT_GT(routed_->counters().unsubscribed, 0u) << "no publication was lost";
  ASSERT_TRUE(eventually([&] { return b_.subscriber().subscriptions() >= 2; }));
  for (int n = 10; n < 15; ++n) send(alice_, bob_, n);
  EXPECT_EQ(shown(*follower, 10), bodies_range(5, 15));
  EXPECT_TRUE(shown(*follower, 1, kQuiet).empty()) << "an entry was shown twice";
  EXPECT_GE(follower->feed().gaps(), 1u) << "the lost publications did not end in SYNC_NEEDED";
  EXPECT_FALSE(bob->closed());
}

TEST_F(RoutingTest, ACorruptPublicationIsCountedAndEndsInSyncNeeded) {
  start_gateway(b_, "gw-b");
  start_node();
  auto bob = login(b_, bob_);
  auto follower = follow(*bob);
  for (int n = 0; n < 3; ++n) send(alice_, bob_, n);
  EXPECT_EQ(shown(*follower, 3), bodies_range(0, 3));
  ASSERT_EQ(follower->feed().gaps(), 0u);
  // Garbage on gateway B's channel: it cannot say what it lost, so every followed shard is broken.
  auto redis = RoutingRedis::create(routing_options("vandal")).value();
  RedisCommand junk{"PUBLISH", redis->keys().channel("gw-b"), std::string("R\x01\x00 not a payload", 18)};
  auto heard = redis->run(redis->instance_of_gateway("gw-b"), std::span(&junk, 1));
  ASSERT_TRUE(heard.ok());
  ASSERT_EQ(heard->front().integer, 1) << "gateway B was not subscribed";
  ASSERT_TRUE(eventually([&] { return b_.subscriber().corrupt_payloads() == 1; }));
  for (int n = 3; n < 6; ++n) send(alice_, bob_, n);
  EXPECT_EQ(shown(*follower, 3), bodies_range(3, 6));
  EXPECT_TRUE(shown(*follower, 1, kQuiet).empty()) << "an entry was shown twice";
  EXPECT_GE(follower->feed().gaps(), 1u) << "the corrupt publication did not end in SYNC_NEEDED";
  EXPECT_TRUE(b_.subscriber().subscribed()) << "a corrupt payload must not cost the subscription";
}

TEST_F(RoutingTest, RoutesOfAGatewayThatStopsRefreshingExpire) {
  ttl_ = 1000ms;
  start_gateway(a_, "gw-a");
  start_gateway(b_, "gw-b");
  auto alice = login(a_, alice_);
  auto bob = login(b_, bob_);
  EXPECT_EQ(routes_of(alice_), std::vector<std::string>{"gw-a"});
  // Routes outlive their TTL while refreshed.
  std::this_thread::sleep_for(ttl_ * 2);  // the TTL itself is what is under test here
  EXPECT_EQ(routes_of(alice_), std::vector<std::string>{"gw-a"});
  EXPECT_EQ(routes_of(bob_), std::vector<std::string>{"gw-b"});

  a_.routing->stop(/*remove_routes=*/false);  // as if gateway A hung: nothing refreshes, nothing is removed
  ASSERT_TRUE(eventually([&] { return routes_of(alice_).empty(); }, 10s)) << "A's route never expired";
  auto redis = RoutingRedis::create(routing_options("reader")).value();
  ASSERT_TRUE(eventually(
      [&] {
        RedisCommand exists{"EXISTS", redis->keys().route(alice_)};
        auto r = redis->run(redis->instance_of_user(alice_), std::span(&exists, 1));
        return r.ok() && r->front().integer == 0;
      },
      10s))
      << "the route key outlived its TTL";
  // Gone from the gateway registry too; B (refreshing) stays.
  RedisCommand live{"ZRANGEBYSCORE", redis->keys().gateways(), std::to_string(routing_now_ms()), "+inf"};
  auto gateways = redis->run(0, std::span(&live, 1));
  ASSERT_TRUE(gateways.ok());
  std::vector<std::string> ids;
  for (const auto& e : gateways->front().elements) ids.push_back(e.str);
  EXPECT_EQ(ids, std::vector<std::string>{"gw-b"});
  EXPECT_EQ(routes_of(bob_), std::vector<std::string>{"gw-b"});
  // A closed connection removes its route at once.
  bob.reset();
  EXPECT_TRUE(eventually([&] { return routes_of(bob_).empty(); }, 5s))
      << "B kept the route of a closed connection";
}

TEST_F(RoutingTest, ARestartedRoutingRedisGetsTheRoutesBackAndPushesResume) {
  testing::ChildRedis child;
  if (!child.available()) GTEST_SKIP() << "redis-server is not on PATH";
  ASSERT_TRUE(child.start());
  endpoints_ = {child.endpoint()};
  GatewayRoutingOptions fast;
  fast.refresh_interval = 200ms;
  fast.subscriber.reconnect_backoff = 50ms;
  start_gateway(b_, "gw-b", fast);
  start_node();
  auto bob = login(b_, bob_);
  auto follower = follow(*bob);
  for (int n = 0; n < 3; ++n) send(alice_, bob_, n);
  EXPECT_EQ(shown(*follower, 3), bodies_range(0, 3));

  child.crash();
  for (int n = 3; n < 6; ++n) send(alice_, bob_, n);  // the node cannot publish these
  routed_->flush();
  EXPECT_GT(routed_->counters().lost_reports, 0u);
  ASSERT_TRUE(child.start());  // empty: every route and the registry are gone
  ASSERT_TRUE(eventually([&] { return b_.routing->redis_registrar().routes_lost() >= 1; }))
      << "the gateway never noticed its route was gone";
  ASSERT_TRUE(eventually([&] { return b_.subscriber().subscriptions() >= 2; }));
  ASSERT_TRUE(eventually([&] { return routed_->counters().pending_unknown == 0; }));
  EXPECT_EQ(routes_of(bob_), std::vector<std::string>{"gw-b"});
  for (int n = 6; n < 9; ++n) send(alice_, bob_, n);
  EXPECT_EQ(shown(*follower, 6), bodies_range(3, 9));
  EXPECT_GE(follower->feed().gaps(), 1u);
  // Pushes resumed: the next messages come as DELIVERs, without another SYNC.
  const uint64_t runs = follower->feed().sync_runs();
  const uint64_t received = b_.subscriber().received();
  for (int n = 9; n < 12; ++n) send(alice_, bob_, n);
  EXPECT_EQ(shown(*follower, 3), bodies_range(9, 12));
  EXPECT_TRUE(shown(*follower, 1, kQuiet).empty()) << "an entry was shown twice";
  EXPECT_EQ(follower->feed().sync_runs(), runs) << "pushes did not resume";
  EXPECT_GT(b_.subscriber().received(), received);
}

// The routing Redis is down when bob authenticates: his connection goes on (no route), the node cannot
// publish; once Redis is back the gateway writes the missing route, tells bob to SYNC, and pushes follow.
TEST_F(RoutingTest, ARouteThatCouldNotBeWrittenAtAuthIsWrittenLaterAndTheUserResyncs) {
  testing::ChildRedis child;
  if (!child.available()) GTEST_SKIP() << "redis-server is not on PATH";
  ASSERT_TRUE(child.start());
  endpoints_ = {child.endpoint()};
  GatewayRoutingOptions fast;
  fast.refresh_interval = 200ms;
  fast.subscriber.reconnect_backoff = 50ms;
  start_gateway(b_, "gw-b", fast);
  start_node();
  child.crash();
  auto bob = login(b_, bob_);  // the route write fails; AUTH_OK all the same
  auto follower = follow(*bob);
  for (int n = 0; n < 3; ++n) send(alice_, bob_, n);
  ASSERT_TRUE(child.start());
  ASSERT_TRUE(eventually([&] { return b_.routing->redis_registrar().routes_lost() >= 1; }));
  EXPECT_EQ(routes_of(bob_), std::vector<std::string>{"gw-b"});
  EXPECT_EQ(shown(*follower, 3), bodies_range(0, 3));
  EXPECT_GE(follower->feed().gaps(), 1u) << "bob was never told to SYNC";
  ASSERT_TRUE(eventually([&] { return routed_->counters().pending_unknown == 0; }));
  for (int n = 3; n < 6; ++n) send(alice_, bob_, n);
  EXPECT_EQ(shown(*follower, 3), bodies_range(3, 6));
  EXPECT_TRUE(shown(*follower, 1, kQuiet).empty()) << "an entry was shown twice";
  EXPECT_FALSE(bob->closed());
}

}  // namespace
}  // namespace qim
