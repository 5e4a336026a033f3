// Who blocks a sender, kept by the gateway (blocked_by_cache.h, docs/adr/0166): the cache's own rules, and
// over a real gateway with a memory inbox: direct SENDs read the block cells once, a BLOCK on this gateway
// holds for the very next SEND, a signal from another gateway drops what is kept, and without the signal
// the entry is re-read after its time.
#include "gateway/blocked_by_cache.h"

#include <gtest/gtest.h>

#include "gateway/tests/gateway_harness.h"
#include "inbox/inbox.h"
#include "inbox/memory/memory_inbox.h"
#include "inbox/privacy.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

UserId u(std::string_view name) {
  return *UserId::parse(name);
}

std::shared_ptr<const std::set<UserId>> set_of(std::initializer_list<std::string_view> names) {
  auto s = std::make_shared<std::set<UserId>>();
  for (auto n : names) s->insert(u(n));
  return s;
}

TEST(BlockedByCacheTest, ServesAStoredReadUntilItsTimeThenAsksAgain) {
  BlockedByCache cache(1'000);
  auto miss = cache.lookup(u("bob"), 10'000);
  EXPECT_FALSE(miss.blockers);
  cache.store(u("bob"), miss.generation, set_of({"alice"}), 10'000);
  auto hit = cache.lookup(u("bob"), 10'999);
  ASSERT_TRUE(hit.blockers);
  EXPECT_TRUE(hit.blockers->contains(u("alice")));
  EXPECT_FALSE(cache.lookup(u("bob"), 11'000).blockers) << "served past its time";
  EXPECT_FALSE(cache.lookup(u("carol"), 10'000).blockers) << "another user's entry";
}

TEST(BlockedByCacheTest, AReadThatBeganBeforeAnInvalidationIsNotKept) {
  BlockedByCache cache(1'000);
  auto before = cache.lookup(u("bob"), 0);
  cache.invalidate(u("bob"));  // a block of bob lands while the read is on its way
  cache.store(u("bob"), before.generation, set_of({}), 0);
  EXPECT_FALSE(cache.lookup(u("bob"), 1).blockers) << "a read older than the block was kept";
  auto after = cache.lookup(u("bob"), 2);
  cache.store(u("bob"), after.generation, set_of({"alice"}), 2);
  ASSERT_TRUE(cache.lookup(u("bob"), 3).blockers);
  cache.invalidate(u("bob"));
  EXPECT_FALSE(cache.lookup(u("bob"), 4).blockers);
}

TEST(BlockedByCacheTest, ForgottenUsersAreNotRefilledByReadsInFlightAndZeroKeepsNothing) {
  BlockedByCache cache(1'000);
  auto before = cache.lookup(u("bob"), 0);
  cache.forget(u("bob"));  // the last connection closed
  cache.store(u("bob"), before.generation, set_of({}), 0);
  EXPECT_EQ(cache.size(), 0u);
  BlockedByCache off(0);
  auto l = off.lookup(u("bob"), 0);
  off.store(u("bob"), l.generation, set_of({}), 0);
  EXPECT_FALSE(off.lookup(u("bob"), 0).blockers);
  EXPECT_EQ(off.size(), 0u);
}

TEST(BlockedByCacheTest, TheSignalNamesItsUserAndNothingElseIsTakenForIt) {
  const std::string s = encode_blocked_by_signal(u("bob.b-1@x"));
  ASSERT_TRUE(blocked_by_signal_user(s));
  EXPECT_EQ(blocked_by_signal_user(s)->str(), "bob.b-1@x");
  EXPECT_FALSE(blocked_by_signal_user(R"({"type":"BLOCK_CHANGED","user":"bob","blocked":true})"));
  EXPECT_FALSE(blocked_by_signal_user(R"({"type":"~BLOCKED_BY_CHANGED","user":"b ob"})"));
  EXPECT_FALSE(blocked_by_signal_user(R"({"type":"~BLOCKED_BY_CHANGED","user":""})"));
}

// A gateway with a memory inbox (the privacy cells) and a block cache of `cache_ms`.
class GatewayBlockCacheTest : public testing::GatewayHarness {
 protected:
  GatewayBlockCacheTest() : GatewayHarness("block-cache-secret") {}
  void SetUp() override { start(); }
  void configure(GatewayOptions& o, GatewayDeps& d) override {
    o.block_cache_ms = cache_ms_;
    context_.clock = clock_;
    backend_ = make_memory_inbox(context_);
    inbox_ = std::make_unique<Inbox>(*store_, *backend_);
    d.inbox = inbox_.get();
  }
  uint64_t setting_reads() const { return backend_->counters().reads.load(); }
  // Blocks as another gateway would: the cells only, no signal here.
  void block_elsewhere(std::string_view blocker, std::string_view target) {
    ASSERT_TRUE(Privacy(*backend_).block(u(blocker), u(target), clock_->now_ms()).ok());
  }
  static bool refused_blocked(const Result<client::ServerFrame>& r) {
    return !r.ok() && r.error().message().starts_with("BLOCKED");
  }

  int64_t cache_ms_ = 600'000;
  BackendContext context_;
  std::unique_ptr<InboxBackend> backend_;
  std::unique_ptr<Inbox> inbox_;
};

TEST_F(GatewayBlockCacheTest, DirectSendsAfterTheFirstReadNoBlockCell) {
  auto bob = login("bob");
  ASSERT_TRUE(bob->send("alice", "m0", "hi").ok());
  const uint64_t after_first = setting_reads();
  for (int i = 1; i <= 5; ++i) {
    auto ack = bob->send(i % 2 ? "alice" : "carol", "m" + std::to_string(i), "hi");
    ASSERT_TRUE(ack.ok()) << ack.error().to_string();
  }
  EXPECT_EQ(setting_reads(), after_first) << "each direct SEND read who blocks its sender";
}

TEST_F(GatewayBlockCacheTest, ABlockOnThisGatewayHoldsForTheVeryNextSendAndAnUnblockToo) {
  auto bob = login("bob");
  auto alice = login("alice");
  ASSERT_TRUE(bob->send("alice", "before", "hi").ok());  // who blocks bob is now kept: nobody
  ASSERT_TRUE(alice->block("bob").ok());
  EXPECT_TRUE(refused_blocked(bob->send("alice", "after", "hi"))) << "the kept answer outlived the block";
  ASSERT_TRUE(alice->block("bob", false).ok());
  auto ack = bob->send("alice", "after-unblock", "hi");
  EXPECT_TRUE(ack.ok()) << ack.error().to_string();
}

TEST_F(GatewayBlockCacheTest, AnotherGatewaysSignalDropsWhatIsKept) {
  auto bob = login("bob");
  ASSERT_TRUE(bob->send("alice", "before", "hi").ok());
  block_elsewhere("alice", "bob");
  // Until the signal comes the kept answer stands (the window decision 166 bounds by its time)...
  ASSERT_TRUE(bob->send("alice", "kept", "hi").ok());
  const UserId target[] = {u("bob")};
  gateway_->signal_sink().deliver_signal(
      target, std::make_shared<const std::string>(encode_blocked_by_signal(u("bob"))), 0);
  EXPECT_TRUE(refused_blocked(bob->send("alice", "after", "hi")));
}

class ShortBlockCacheTest : public GatewayBlockCacheTest {
 protected:
  void SetUp() override {
    cache_ms_ = 100;
    start();
  }
};

TEST_F(ShortBlockCacheTest, WithoutASignalABlockHoldsOnceTheKeptAnswerIsOld) {
  auto bob = login("bob");
  ASSERT_TRUE(bob->send("alice", "before", "hi").ok());
  block_elsewhere("alice", "bob");  // and its signal was lost
  bool refused = false;
  for (int i = 0; i < 100 && !refused; ++i) {
    refused = refused_blocked(bob->send("alice", "try-" + std::to_string(i), "hi"));
    if (!refused) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(refused) << "the kept answer was served for ever";
}

}  // namespace
}  // namespace qim
