// Presence across two gateways' hubs over the routing Redis (QIM_TEST_ROUTING_REDIS): one change is one
// publication heard by the gateways that watch the user; a user online on two gateways stays online until
// both let go; last seen and privacy are read back.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "delivery/redis/routing_test_env.h"
#include "mailbox/redis/redis_test_env.h"
#include "presence/presence_hub.h"
#include "presence/redis/redis_presence_exchange.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

UserId u(std::string_view name) {
  return *UserId::parse(name);
}

struct Frames {
  std::mutex mu;
  std::vector<std::string> got;
  PresenceWatch::Push push() {
    return [this](std::shared_ptr<const std::string> f) {
      std::lock_guard lock(mu);
      got.push_back(*f);
    };
  }
  // Waits until `n` frames came (or 10 s); returns them all.
  std::vector<std::string> wait(size_t n, std::chrono::milliseconds max = 10s) {
    const auto deadline = std::chrono::steady_clock::now() + max;
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard lock(mu);
        if (got.size() >= n) break;
      }
      std::this_thread::sleep_for(5ms);
    }
    std::lock_guard lock(mu);
    return got;
  }
};

class RedisPresenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    endpoints_ = testing::test_routing_endpoints();
    if (endpoints_.empty()) GTEST_SKIP() << testing::kTestRoutingRedisSkipMessage;
    prefix_ = unique_test_prefix("presence");
    RoutingOptions o;
    o.endpoints = endpoints_;
    o.key_prefix = prefix_;
    redis_ = std::move(RoutingRedis::create(o)).value();
    PresenceOptions po;
    po.offline_grace = 50ms;
    for (int i = 0; i < 2; ++i) {
      exchanges_[i] = std::make_unique<RedisPresenceExchange>(*redis_, "gw-" + std::to_string(i));
      exchanges_[i]->start();
      hubs_[i] = std::make_unique<PresenceHub>(*exchanges_[i], &directory_, clock_, po);
    }
  }
  void TearDown() override {
    for (int i = 0; i < 2; ++i) {
      if (exchanges_[i]) exchanges_[i]->stop();
      hubs_[i].reset();
      exchanges_[i].reset();
    }
    if (!prefix_.empty()) (void)delete_test_prefix(endpoints_, prefix_);
  }
  // Until the exchange of gateway `i` subscribed to the channels asked so far.
  void subscribed(int i) {
    std::this_thread::sleep_for(300ms);
    (void)i;
  }

  std::vector<std::string> endpoints_;
  std::string prefix_;
  std::unique_ptr<RoutingRedis> redis_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(1'800'000'000'000);
  MemoryPresenceDirectory directory_;
  std::unique_ptr<RedisPresenceExchange> exchanges_[2];
  std::unique_ptr<PresenceHub> hubs_[2];
};

TEST_F(RedisPresenceTest, OnlineWhileAnyGatewayHoldsTheUserThenOfflineWithLastSeen) {
  Frames dave;
  auto watch = hubs_[1]->watch(u("dave"), dave.push());
  auto state = hubs_[1]->subscribe(*watch, {u("carol")});
  ASSERT_TRUE(state.ok()) << state.error().to_string();
  EXPECT_FALSE((*state)[0].online);
  subscribed(1);
  hubs_[0]->connected(u("carol"));
  hubs_[1]->connected(u("carol"));
  auto got = dave.wait(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], R"({"type":"PRESENCE","user":"carol","status":"online","last_seen":null})");
  hubs_[0]->disconnected(u("carol"));
  EXPECT_EQ(dave.wait(2, 500ms).size(), 1u) << "gateway 1 still holds carol";
  clock_->advance_ms(1000);
  hubs_[1]->disconnected(u("carol"));
  got = dave.wait(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1], R"({"type":"PRESENCE","user":"carol","status":"offline","last_seen":1800000001000})");
  auto after = hubs_[0]->subscribe(*hubs_[0]->watch(u("erin"), [](auto) {}), {u("carol")});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ((*after)[0].last_seen, 1'800'000'001'000);
}

TEST_F(RedisPresenceTest, NobodyIsHiddenFromWatchersOnOtherGateways) {
  directory_.set_privacy(u("carol"), PresencePrivacy::kNobody);
  Frames dave;
  auto watch = hubs_[1]->watch(u("dave"), dave.push());
  ASSERT_TRUE(hubs_[1]->subscribe(*watch, {u("carol")}).ok());
  subscribed(1);
  hubs_[0]->connected(u("carol"));
  hubs_[0]->flush();
  EXPECT_TRUE(dave.wait(1, 500ms).empty());
  auto state = hubs_[1]->subscribe(*watch, {u("carol")});
  ASSERT_TRUE(state.ok());
  EXPECT_FALSE((*state)[0].online);
  EXPECT_EQ((*state)[0].last_seen, std::nullopt);
}

// Issue 38 item 9's figure (printed, not asserted): one presence change of a user with 1,000 contacts
// online (500 watching on each of two gateways), from the announcement until the last watcher's frame is
// queued, through the routing Redis: one script, one PUBLISH, two gateways' subscriptions.
TEST_F(RedisPresenceTest, FigureOneChangeToAThousandContacts) {
  constexpr int kContacts = 1000;
  constexpr int kRounds = 100;
  std::atomic<int> got{0};
  std::vector<std::shared_ptr<PresenceWatch>> watches;
  for (int i = 0; i < kContacts; ++i) {
    auto& hub = *hubs_[i % 2];
    watches.push_back(hub.watch(u("w" + std::to_string(i)), [&got](auto) { got++; }));
    ASSERT_TRUE(hub.subscribe(*watches.back(), {u("carol")}).ok());
  }
  std::vector<double> micros;
  for (int round = 0; round < kRounds; ++round) {
    for (bool online : {true, false}) {
      const int target = (2 * round + (online ? 1 : 2)) * kContacts;
      const auto start = std::chrono::steady_clock::now();
      if (online) {
        hubs_[0]->connected(u("carol"));
      } else {
        hubs_[0]->disconnected(u("carol"));
      }
      const auto deadline = start + 10s;
      while (got.load() < target && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      ASSERT_EQ(got.load(), target) << "round " << round;
      // Only the online changes are timed: an offline one waits out the grace first.
      if (online)
        micros.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    }
  }
  std::sort(micros.begin(), micros.end());
  std::printf(
      "presence over the routing Redis: one change of a user with %d contacts online (2 gateways): P50 %.0f "
      "us, P99 %.0f us (%zu changes)\n",
      kContacts, micros[micros.size() / 2], micros[micros.size() * 99 / 100], micros.size());
}

}  // namespace
}  // namespace qim
