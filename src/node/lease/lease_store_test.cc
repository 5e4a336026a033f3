// The lease contract, run on one implementation per binary: memory (unit, an injected clock: no waiting),
// redis (QIM_TEST_REDIS) and cql (QIM_TEST_CQL_HOSTS). Expiry on the real stores is counted by the
// server, so those tests wait (polling a fresh listing, with a generous deadline) for the lease to free.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>

#include "node/lease/lease_store.h"

#if defined(QIM_LEASE_BACKEND_REDIS)
#include "mailbox/redis/redis_test_env.h"
#include "node/lease/redis_lease_store.h"
#endif
#if defined(QIM_LEASE_BACKEND_CQL)
#include "mailbox/scylla/cql/cql_session.h"
#include "node/lease/cql_lease_store.h"
#endif

namespace qim {
namespace {

using namespace std::chrono_literals;

// One implementation under test: a way to open instances over the same leases (a fresh reader each time),
// and a way to let a lease's ttl pass.
class Harness {
 public:
  virtual ~Harness() = default;
  virtual std::unique_ptr<LeaseStore> open() = 0;
  // A ttl that expires quickly on this implementation.
  virtual std::chrono::milliseconds short_ttl() const = 0;
  // Lets `ttl` pass (memory: moves the clock; real stores: nothing, the caller polls).
  virtual void let_pass(std::chrono::milliseconds) {}
};

#if defined(QIM_LEASE_BACKEND_MEMORY)
class MemoryHarness final : public Harness {
 public:
  MemoryHarness()
      : clock_(std::make_shared<ManualClock>(1'000'000)), store_(make_memory_lease_store(clock_)) {}
  // One store in one process: "another instance" is a view of the same one.
  std::unique_ptr<LeaseStore> open() override { return std::make_unique<View>(*store_); }
  std::chrono::milliseconds short_ttl() const override { return 500ms; }
  void let_pass(std::chrono::milliseconds d) override { clock_->advance_ms(d.count() + 1); }

 private:
  class View final : public LeaseStore {
   public:
    explicit View(LeaseStore& s) : s_(s) {}
    std::string_view name() const override { return s_.name(); }
    Result<Epoch> try_acquire(ShardId a, const std::string& b, std::chrono::milliseconds c,
                              Epoch d) override {
      return s_.try_acquire(a, b, c, d);
    }
    Status renew(ShardId a, const std::string& b, Epoch c, std::chrono::milliseconds d) override {
      return s_.renew(a, b, c, d);
    }
    Status release(ShardId a, const std::string& b, Epoch c) override { return s_.release(a, b, c); }
    Result<std::vector<ShardLease>> list(uint32_t n) override { return s_.list(n); }
    Status request_move(ShardId a, const std::string& b, std::chrono::milliseconds c) override {
      return s_.request_move(a, b, c);
    }
    Status cancel_move(ShardId a, const std::string& b) override { return s_.cancel_move(a, b); }
    Status heartbeat(const std::string& n, std::chrono::milliseconds t) override {
      return s_.heartbeat(n, t);
    }
    Result<std::vector<std::string>> live_nodes() override { return s_.live_nodes(); }
    Status leave(const std::string& n) override { return s_.leave(n); }

   private:
    LeaseStore& s_;
  };
  std::shared_ptr<ManualClock> clock_;
  std::unique_ptr<LeaseStore> store_;
};
std::optional<std::string> unavailable() {
  return std::nullopt;
}
std::unique_ptr<Harness> make_harness() {
  return std::make_unique<MemoryHarness>();
}
#endif

#if defined(QIM_LEASE_BACKEND_REDIS)
class RedisHarness final : public Harness {
 public:
  RedisHarness() : endpoints_(test_redis_endpoints()), prefix_(unique_test_prefix("lease")) {}
  ~RedisHarness() override { (void)delete_test_prefix(endpoints_, prefix_); }
  std::unique_ptr<LeaseStore> open() override {
    RedisLeaseOptions o;
    o.endpoints = endpoints_;
    o.key_prefix = prefix_;
    auto s = open_redis_lease_store(o);
    EXPECT_TRUE(s.ok()) << s.error().to_string();
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::chrono::milliseconds short_ttl() const override { return 300ms; }

 private:
  std::vector<std::string> endpoints_;
  std::string prefix_;
};
std::optional<std::string> unavailable() {
  if (test_redis_endpoints().empty()) return std::string(kTestRedisSkipMessage);
  return std::nullopt;
}
std::unique_ptr<Harness> make_harness() {
  return std::make_unique<RedisHarness>();
}
#endif

#if defined(QIM_LEASE_BACKEND_CQL)
const char* cql_hosts() {
  const char* h = std::getenv("QIM_TEST_CQL_HOSTS");  // NOLINT(concurrency-mt-unsafe): read at set-up
  return h != nullptr && *h != '\0' ? h : nullptr;
}
class CqlHarness final : public Harness {
 public:
  CqlHarness() {
    static int next = 0;
    keyspace_ = "leases_lt_" + std::to_string(::getpid()) + "_" + std::to_string(next++);
  }
  ~CqlHarness() override {
    auto admin = cql::Session::connect({.hosts = cql::split_hosts(cql_hosts())});
    if (admin.ok()) (void)admin->query("DROP KEYSPACE IF EXISTS " + keyspace_, {}, {.timeout_ms = 60'000});
  }
  std::unique_ptr<LeaseStore> open() override {
    CqlLeaseOptions o;
    o.hosts = cql::split_hosts(cql_hosts());
    o.keyspace = keyspace_;
    auto s = open_cql_lease_store(o);
    EXPECT_TRUE(s.ok()) << s.error().to_string();
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::chrono::milliseconds short_ttl() const override { return 1ms; }  // written as 2 s (whole seconds + 1)

 private:
  std::string keyspace_;
};
std::optional<std::string> unavailable() {
  if (!cql_hosts())
    return std::string("QIM_TEST_CQL_HOSTS is unset: no CQL cluster to test the CQL leases against");
  return std::nullopt;
}
std::unique_ptr<Harness> make_harness() {
  return std::make_unique<CqlHarness>();
}
#endif

// One fixture name per implementation, so the three binaries' tests have distinct ctest names.
#if defined(QIM_LEASE_BACKEND_MEMORY)
#define QIM_LEASE_FIXTURE MemoryLeaseStoreTest
#elif defined(QIM_LEASE_BACKEND_REDIS)
#define QIM_LEASE_FIXTURE RedisLeaseStoreTest
#else
#define QIM_LEASE_FIXTURE CqlLeaseStoreTest
#endif
#define LEASE_TEST(name) TEST_F(QIM_LEASE_FIXTURE, name)

constexpr uint32_t kShards = 4;
const std::string kN1 = "node-1";
const std::string kN2 = "node-2";

class LeaseStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = unavailable()) GTEST_SKIP() << *why;
    harness_ = make_harness();
    store_ = harness_->open();
    ASSERT_NE(store_, nullptr);
  }

  // The lease of `shard` as a fresh instance lists it.
  ShardLease fresh(ShardId shard) {
    auto reader = harness_->open();
    auto l = reader->list(kShards);
    EXPECT_TRUE(l.ok()) << l.error().to_string();
    return l.ok() ? (*l)[shard.value] : ShardLease{};
  }

  // Lets `ttl` pass and waits (polling a fresh listing) until the lease of `shard` is free.
  void expire(ShardId shard, std::chrono::milliseconds ttl) {
    harness_->let_pass(ttl);
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (!fresh(shard).free()) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline)
          << "the lease of shard " << shard.value << " never expired";
      std::this_thread::sleep_for(50ms);
    }
  }

  std::unique_ptr<Harness> harness_;
  std::unique_ptr<LeaseStore> store_;
};
class QIM_LEASE_FIXTURE : public LeaseStoreTest {};

LEASE_TEST(AcquireRenewReleaseAsAFreshReaderSeesThem) {
  ASSERT_EQ(fresh(ShardId{1}).epoch, Epoch{0});
  EXPECT_TRUE(fresh(ShardId{1}).free());
  auto e1 = store_->try_acquire(ShardId{1}, kN1, 60s, Epoch{0});
  ASSERT_TRUE(e1.ok()) << e1.error().to_string();
  EXPECT_EQ(*e1, Epoch{1});
  ShardLease seen = fresh(ShardId{1});
  EXPECT_EQ(seen.owner, kN1);
  EXPECT_EQ(seen.epoch, Epoch{1});
  EXPECT_TRUE(fresh(ShardId{0}).free());  // other shards untouched

  ASSERT_TRUE(store_->renew(ShardId{1}, kN1, *e1, 60s).ok());
  EXPECT_EQ(fresh(ShardId{1}).owner, kN1);
  ASSERT_TRUE(store_->release(ShardId{1}, kN1, *e1).ok());
  seen = fresh(ShardId{1});
  EXPECT_TRUE(seen.free());
  EXPECT_EQ(seen.epoch, Epoch{1});  // the epoch outlives the lease
  EXPECT_EQ(store_->renew(ShardId{1}, kN1, *e1, 60s).code(), kNotOwner);

  auto e2 = harness_->open()->try_acquire(ShardId{1}, kN2, 60s, Epoch{0});
  ASSERT_TRUE(e2.ok()) << e2.error().to_string();
  EXPECT_EQ(*e2, Epoch{2});
  EXPECT_EQ(fresh(ShardId{1}).owner, kN2);
}

LEASE_TEST(ASecondNodeCannotTakeALiveLease) {
  auto e1 = store_->try_acquire(ShardId{2}, kN1, 60s, Epoch{0});
  ASSERT_TRUE(e1.ok()) << e1.error().to_string();
  auto other = harness_->open();
  auto taken = other->try_acquire(ShardId{2}, kN2, 60s, Epoch{0});
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.code(), kNotOwner);
  EXPECT_NE(taken.error().message().find(kN1), std::string::npos) << taken.error().to_string();
  EXPECT_EQ(other->renew(ShardId{2}, kN2, *e1, 60s).code(), kNotOwner);
  EXPECT_EQ(other->release(ShardId{2}, kN2, *e1).code(), kNotOwner);
  // Nothing of that changed the lease.
  const ShardLease seen = fresh(ShardId{2});
  EXPECT_EQ(seen.owner, kN1);
  EXPECT_EQ(seen.epoch, *e1);
  EXPECT_TRUE(store_->renew(ShardId{2}, kN1, *e1, 60s).ok());
}

LEASE_TEST(AnExpiredLeaseIsTakenAtAHigherEpochAndTheOldHolderIsRefused) {
  const auto ttl = harness_->short_ttl();
  auto e1 = store_->try_acquire(ShardId{3}, kN1, ttl, Epoch{0});
  ASSERT_TRUE(e1.ok()) << e1.error().to_string();
  expire(ShardId{3}, ttl);
  auto other = harness_->open();
  auto e2 = other->try_acquire(ShardId{3}, kN2, 60s, Epoch{0});
  ASSERT_TRUE(e2.ok()) << e2.error().to_string();
  EXPECT_GT(*e2, *e1);
  // The old holder can neither extend nor free what is now another node's.
  EXPECT_EQ(store_->renew(ShardId{3}, kN1, *e1, 60s).code(), kNotOwner);
  EXPECT_EQ(store_->release(ShardId{3}, kN1, *e1).code(), kNotOwner);
  EXPECT_EQ(fresh(ShardId{3}).owner, kN2);
}

LEASE_TEST(EveryGrantIsAboveTheStoresEpochAndTheLeasesOwn) {
  auto e = store_->try_acquire(ShardId{0}, kN1, 60s, Epoch{7});  // the store has seen epoch 7
  ASSERT_TRUE(e.ok()) << e.error().to_string();
  EXPECT_EQ(*e, Epoch{8});
  ASSERT_TRUE(store_->release(ShardId{0}, kN1, *e).ok());
  e = store_->try_acquire(ShardId{0}, kN2, 60s, Epoch{3});  // a lower floor: the lease's epoch wins
  ASSERT_TRUE(e.ok()) << e.error().to_string();
  EXPECT_EQ(*e, Epoch{9});
  // Taking one's own live lease again (a restart under the same id) also moves the epoch up.
  auto again = store_->try_acquire(ShardId{0}, kN2, 60s, Epoch{0});
  ASSERT_TRUE(again.ok()) << again.error().to_string();
  EXPECT_EQ(*again, Epoch{10});
  EXPECT_EQ(store_->renew(ShardId{0}, kN2, Epoch{9}, 60s).code(), kNotOwner);  // the old grant is fenced
  EXPECT_TRUE(store_->renew(ShardId{0}, kN2, Epoch{10}, 60s).ok());
}

LEASE_TEST(EpochsStopAt65535AndTheLastGrantWritesNothing) {
  auto e = store_->try_acquire(ShardId{1}, kN1, 60s, Epoch{kMaxEpoch - 1});
  ASSERT_TRUE(e.ok()) << e.error().to_string();
  EXPECT_EQ(*e, Epoch{kMaxEpoch});
  ASSERT_TRUE(store_->release(ShardId{1}, kN1, *e).ok());
  auto refused = store_->try_acquire(ShardId{1}, kN2, 60s, Epoch{0});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), Errc::kResourceExhausted);
  const ShardLease seen = fresh(ShardId{1});
  EXPECT_TRUE(seen.free());
  EXPECT_EQ(seen.epoch, Epoch{kMaxEpoch});
  EXPECT_EQ(store_->try_acquire(ShardId{2}, kN2, 60s, Epoch{kMaxEpoch}).code(), Errc::kResourceExhausted);
  EXPECT_TRUE(fresh(ShardId{2}).free());
  EXPECT_EQ(fresh(ShardId{2}).epoch, Epoch{0});
}

LEASE_TEST(HeartbeatsSayWhichNodesLive) {
  ASSERT_TRUE(store_->heartbeat(kN1, 60s).ok());
  ASSERT_TRUE(store_->heartbeat(kN2, harness_->short_ttl()).ok());
  auto live = harness_->open()->live_nodes();
  ASSERT_TRUE(live.ok()) << live.error().to_string();
  EXPECT_EQ(*live, (std::vector<std::string>{kN1, kN2}));
  harness_->let_pass(harness_->short_ttl());
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (true) {
    live = harness_->open()->live_nodes();
    ASSERT_TRUE(live.ok()) << live.error().to_string();
    if (*live == std::vector<std::string>{kN1}) break;
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "node-2's heartbeat never expired";
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(store_->leave(kN1).ok());
  live = harness_->open()->live_nodes();
  ASSERT_TRUE(live.ok());
  EXPECT_TRUE(live->empty());
}

LEASE_TEST(APendingMoveLetsOnlyItsTargetTakeTheShardAndTheGrantEndsIt) {
  auto e1 = store_->try_acquire(ShardId{1}, kN1, 60s, Epoch{0});
  ASSERT_TRUE(e1.ok()) << e1.error().to_string();
  ASSERT_TRUE(harness_->open()->request_move(ShardId{1}, kN2, 60s).ok());
  ShardLease seen = fresh(ShardId{1});
  EXPECT_EQ(seen.owner, kN1);  // the holder keeps the lease (and may renew it) until it gives it up
  EXPECT_EQ(seen.moving_to, kN2);
  EXPECT_TRUE(fresh(ShardId{0}).moving_to.empty());
  EXPECT_TRUE(store_->renew(ShardId{1}, kN1, *e1, 60s).ok());
  // A second move is refused, naming the first; nothing changes.
  Status again = harness_->open()->request_move(ShardId{1}, "node-3", 60s);
  EXPECT_EQ(again.code(), Errc::kInvariant);
  EXPECT_NE(again.error().message().find(kN2), std::string::npos) << again.error().to_string();
  EXPECT_EQ(fresh(ShardId{1}).moving_to, kN2);

  ASSERT_TRUE(store_->release(ShardId{1}, kN1, *e1).ok());
  seen = fresh(ShardId{1});
  EXPECT_TRUE(seen.free());
  EXPECT_EQ(seen.moving_to, kN2);  // released, still reserved for the target
  // Neither the old holder nor a third node may take it in between.
  auto back = store_->try_acquire(ShardId{1}, kN1, 60s, Epoch{0});
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.code(), kNotOwner);
  EXPECT_NE(back.error().message().find("being moved to " + kN2), std::string::npos)
      << back.error().to_string();
  EXPECT_EQ(harness_->open()->try_acquire(ShardId{1}, "node-3", 60s, Epoch{0}).code(), kNotOwner);
  EXPECT_TRUE(fresh(ShardId{1}).free());
  EXPECT_EQ(fresh(ShardId{1}).epoch, *e1);

  auto e2 = harness_->open()->try_acquire(ShardId{1}, kN2, 60s, Epoch{0});
  ASSERT_TRUE(e2.ok()) << e2.error().to_string();
  EXPECT_GT(*e2, *e1);
  seen = fresh(ShardId{1});
  EXPECT_EQ(seen.owner, kN2);
  EXPECT_EQ(seen.epoch, *e2);
  EXPECT_TRUE(seen.moving_to.empty());  // the grant ended the move
  EXPECT_EQ(store_->cancel_move(ShardId{1}, kN2).code(), Errc::kNotFound);
  // With the move done the shard is an ordinary lease again: released, anyone may take it.
  ASSERT_TRUE(store_->release(ShardId{1}, kN2, *e2).ok());
  auto e3 = store_->try_acquire(ShardId{1}, kN1, 60s, Epoch{0});
  ASSERT_TRUE(e3.ok()) << e3.error().to_string();
  EXPECT_GT(*e3, *e2);
}

LEASE_TEST(AMoveIsRefusedToItsHolderAndCanBeCancelledOrExpire) {
  auto e1 = store_->try_acquire(ShardId{2}, kN1, 60s, Epoch{0});
  ASSERT_TRUE(e1.ok()) << e1.error().to_string();
  Status to_holder = store_->request_move(ShardId{2}, kN1, 60s);
  EXPECT_EQ(to_holder.code(), Errc::kInvariant);
  EXPECT_NE(to_holder.error().message().find("already owned by " + kN1), std::string::npos)
      << to_holder.error().to_string();
  EXPECT_TRUE(fresh(ShardId{2}).moving_to.empty());
  EXPECT_EQ(store_->request_move(ShardId{2}, "", 60s).code(), Errc::kInvalidArgument);
  EXPECT_EQ(store_->request_move(ShardId{2}, kN2, 0ms).code(), Errc::kInvalidArgument);
  EXPECT_TRUE(fresh(ShardId{2}).moving_to.empty());

  // Cancelled: only the move's own target names it; afterwards any node may take the shard again.
  ASSERT_TRUE(store_->request_move(ShardId{2}, kN2, 60s).ok());
  EXPECT_EQ(store_->cancel_move(ShardId{2}, "node-3").code(), Errc::kNotFound);
  EXPECT_EQ(fresh(ShardId{2}).moving_to, kN2);
  ASSERT_TRUE(harness_->open()->cancel_move(ShardId{2}, kN2).ok());
  EXPECT_TRUE(fresh(ShardId{2}).moving_to.empty());
  ASSERT_TRUE(store_->release(ShardId{2}, kN1, *e1).ok());
  auto e2 = store_->try_acquire(ShardId{2}, kN1, 60s, Epoch{0});
  ASSERT_TRUE(e2.ok()) << e2.error().to_string();

  // Expired: a move whose target never takes the shard stops reserving it after its ttl.
  const auto ttl = harness_->short_ttl();
  ASSERT_TRUE(store_->request_move(ShardId{2}, kN2, ttl).ok());
  ASSERT_TRUE(store_->release(ShardId{2}, kN1, *e2).ok());
  harness_->let_pass(ttl);
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!fresh(ShardId{2}).moving_to.empty()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the move of shard 2 never expired";
    std::this_thread::sleep_for(50ms);
  }
  auto e3 = store_->try_acquire(ShardId{2}, kN1, 60s, Epoch{0});
  ASSERT_TRUE(e3.ok()) << e3.error().to_string();
  EXPECT_GT(*e3, *e2);
}

LEASE_TEST(AMoveOfANeverLeasedShardReservesItForTheTarget) {
  ASSERT_TRUE(store_->request_move(ShardId{3}, kN2, 60s).ok());
  EXPECT_EQ(fresh(ShardId{3}).moving_to, kN2);
  EXPECT_EQ(store_->try_acquire(ShardId{3}, kN1, 60s, Epoch{0}).code(), kNotOwner);
  auto e = harness_->open()->try_acquire(ShardId{3}, kN2, 60s, Epoch{4});
  ASSERT_TRUE(e.ok()) << e.error().to_string();
  EXPECT_EQ(*e, Epoch{5});
  EXPECT_EQ(fresh(ShardId{3}).owner, kN2);
  EXPECT_TRUE(fresh(ShardId{3}).moving_to.empty());
}

LEASE_TEST(BadArgumentsWriteNothing) {
  EXPECT_EQ(store_->try_acquire(ShardId{0}, "", 60s, Epoch{0}).code(), Errc::kInvalidArgument);
  EXPECT_EQ(store_->try_acquire(ShardId{0}, kN1, 0ms, Epoch{0}).code(), Errc::kInvalidArgument);
  EXPECT_TRUE(fresh(ShardId{0}).free());
  EXPECT_EQ(fresh(ShardId{0}).epoch, Epoch{0});
}

#if defined(QIM_LEASE_BACKEND_CQL)
// A shard_lease table created before moves existed (no moving_to column) gets the column when a node opens
// the lease store, and its leases stay as they were.
TEST_F(CqlLeaseStoreTest, ATableOfBeforeMovesGetsItsMoveColumnAndKeepsItsLeases) {
  const std::string ks = "leases_old_" + std::to_string(::getpid());
  auto admin = cql::Session::connect({.hosts = cql::split_hosts(cql_hosts())});
  ASSERT_TRUE(admin.ok()) << admin.error().to_string();
  const cql::ExecOptions slow{.timeout_ms = 60'000};
  for (const std::string& ddl :
       {"CREATE KEYSPACE " + ks + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE " + ks + ".shard_lease (shard int PRIMARY KEY, epoch int, owner text)",
        "INSERT INTO " + ks + ".shard_lease (shard, epoch) VALUES (2, 7)"}) {
    auto done = admin->query(ddl, {}, slow);
    ASSERT_TRUE(done.ok()) << ddl << ": " << done.error().to_string();
  }
  CqlLeaseOptions o;
  o.hosts = cql::split_hosts(cql_hosts());
  o.keyspace = ks;
  auto store = open_cql_lease_store(o);
  ASSERT_TRUE(store.ok()) << store.error().to_string();
  auto listed = (*store)->list(kShards);
  ASSERT_TRUE(listed.ok()) << listed.error().to_string();
  EXPECT_EQ((*listed)[2].epoch, Epoch{7});
  ASSERT_TRUE((*store)->request_move(ShardId{2}, kN2, 60s).ok());
  EXPECT_EQ((*store)->try_acquire(ShardId{2}, kN1, 60s, Epoch{0}).code(), kNotOwner);
  auto e = (*store)->try_acquire(ShardId{2}, kN2, 60s, Epoch{0});
  ASSERT_TRUE(e.ok()) << e.error().to_string();
  EXPECT_EQ(*e, Epoch{8});
  EXPECT_TRUE(open_cql_lease_store(o).ok());  // a second open finds the column there
  (void)admin->query("DROP KEYSPACE IF EXISTS " + ks, {}, slow);
}
#endif

}  // namespace
}  // namespace qim
