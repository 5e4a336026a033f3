// Two MailboxNodes in one process, as two `qim mailbox` processes would run: they share an embedded mailbox
// log (standing in for Kafka), a real store (each node its own store instance and connections) and the
// lease store of that deployment (each its own instance). Built twice: Redis store + Redis leases
// (QIM_TEST_REDIS, label redis) and scylla store + CQL leases (QIM_TEST_CQL_HOSTS, label scylla). A
// producer keeps appending messages to every shard throughout; at the end a fresh store instance reads
// every mailbox back.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <thread>

#include "log/testing/temp_dir.h"
#include "log/testing/test_log.h"
#include "mailbox/message_codec.h"
#include "mailbox/store_options.h"
#include "node/lease/ownership_test_support.h"
#if defined(QIM_FAILOVER_BACKEND_CQL)
#include <unistd.h>

#include "mailbox/scylla/cql/cql_session.h"
#include "node/lease/cql_lease_store.h"
#else
#include "mailbox/redis/redis_test_env.h"
#include "node/lease/redis_lease_store.h"
#endif
#include "node/lease/shard_ownership.h"
#include "node/quarantine.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kShards = 16;
constexpr auto kTtl = 1500ms;
constexpr auto kMargin = 450ms;
#if defined(QIM_FAILOVER_BACKEND_CQL)
#define QIM_FAILOVER_FIXTURE CqlShardFailoverTest
// CQL writes a 1.5 s ttl as 3 s (whole seconds + 1): the documented bound is ttl + one scan + 2 s.
constexpr auto kTakeoverBound = kTtl + kTtl / 3 + 2000ms;
constexpr auto kProducerPause = 100ms;  // a shared Cassandra on a small machine
const char* cql_hosts() {
  const char* h = std::getenv("QIM_TEST_CQL_HOSTS");  // NOLINT(concurrency-mt-unsafe): read at set-up
  return h != nullptr && *h != '\0' ? h : nullptr;
}
#else
#define QIM_FAILOVER_FIXTURE RedisShardFailoverTest
constexpr auto kTakeoverBound = kTtl + kTtl / 3;  // the documented bound: ttl + one scan
constexpr auto kProducerPause = 5ms;
#endif
constexpr auto kSlack = 30s;  // for a loaded machine

// A lease store whose connection can be cut: the node behind it can neither renew nor announce itself, as
// if it were frozen or partitioned from the lease store while its workers still run.
class CuttableLeases final : public LeaseStore {
 public:
  explicit CuttableLeases(std::unique_ptr<LeaseStore> inner) : inner_(std::move(inner)) {}
  std::atomic<bool> cut{false};

  std::string_view name() const override { return inner_->name(); }
  Result<Epoch> try_acquire(ShardId s, const std::string& n, std::chrono::milliseconds t, Epoch f) override {
    if (cut) return down();
    return inner_->try_acquire(s, n, t, f);
  }
  Status renew(ShardId s, const std::string& n, Epoch e, std::chrono::milliseconds t) override {
    if (cut) return down();
    return inner_->renew(s, n, e, t);
  }
  Status release(ShardId s, const std::string& n, Epoch e) override {
    if (cut) return down();
    return inner_->release(s, n, e);
  }
  Result<std::vector<ShardLease>> list(uint32_t n) override {
    if (cut) return down();
    return inner_->list(n);
  }
  Status request_move(ShardId s, const std::string& n, std::chrono::milliseconds t) override {
    if (cut) return down();
    return inner_->request_move(s, n, t);
  }
  Status cancel_move(ShardId s, const std::string& n) override {
    if (cut) return down();
    return inner_->cancel_move(s, n);
  }
  Status heartbeat(const std::string& n, std::chrono::milliseconds t) override {
    if (cut) return down();
    return inner_->heartbeat(n, t);
  }
  Result<std::vector<std::string>> live_nodes() override {
    if (cut) return down();
    return inner_->live_nodes();
  }
  Status leave(const std::string& n) override {
    if (cut) return down();
    return inner_->leave(n);
  }

 private:
  static Error down() { return Error(Errc::kTransport, "injected: the lease store is unreachable"); }
  std::unique_ptr<LeaseStore> inner_;
};

class ShardFailoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(QIM_FAILOVER_BACKEND_CQL)
    if (!cql_hosts())
      GTEST_SKIP() << "QIM_TEST_CQL_HOSTS is unset: no CQL cluster for the scylla failover test";
    keyspace_ = "leases_fo_" + std::to_string(::getpid());
#else
    endpoints_ = test_redis_endpoints();
    if (endpoints_.empty()) GTEST_SKIP() << kTestRedisSkipMessage;
    prefix_ = unique_test_prefix("failover");
#endif
    log_ = testing::open_test_log(dir_.sub("mailbox-log"), kShards, "mailbox");
    quarantine_log_ = testing::open_test_log(dir_.sub("quarantine-log"), kQuarantinePartitions, "quarantine");
    for (uint32_t s = 0; s < kShards; ++s) pairs_[s] = testing::two_users_of(shards_, ShardId{s});
  }
  void TearDown() override {
    stop_producer();
#if defined(QIM_FAILOVER_BACKEND_CQL)
    if (!keyspace_.empty()) {
      auto admin = cql::Session::connect({.hosts = cql::split_hosts(cql_hosts())});
      if (admin.ok()) (void)admin->query("DROP KEYSPACE IF EXISTS " + keyspace_, {}, {.timeout_ms = 60'000});
    }
#else
    if (!endpoints_.empty()) (void)delete_test_prefix(endpoints_, prefix_);
#endif
  }

  std::unique_ptr<MailboxStore> open_store() {
    StoreOptions so;
    so.shard_count = kShards;
#if defined(QIM_FAILOVER_BACKEND_CQL)
    so.backend = "scylla";
    so.cql_hosts = cql::split_hosts(cql_hosts());
    so.cql_keyspace = keyspace_;
#else
    so.backend = "redis";
    so.redis_endpoints = endpoints_;
    so.redis_key_prefix = prefix_;
#endif
    auto store = open_mailbox_store(so);
    EXPECT_TRUE(store.ok()) << store.error().to_string();
    return store.ok() ? std::move(*store) : nullptr;
  }
  std::unique_ptr<LeaseStore> open_leases() {
#if defined(QIM_FAILOVER_BACKEND_CQL)
    CqlLeaseOptions o;
    o.hosts = cql::split_hosts(cql_hosts());
    o.keyspace = keyspace_;
    auto leases = open_cql_lease_store(o);
#else
    RedisLeaseOptions o;
    o.endpoints = endpoints_;
    o.key_prefix = prefix_;
    auto leases = open_redis_lease_store(o);
#endif
    EXPECT_TRUE(leases.ok()) << leases.error().to_string();
    return leases.ok() ? std::move(*leases) : nullptr;
  }
  NodeOptions node_options() {
    NodeOptions o;
    o.leased = true;
    o.poll_wait = 5ms;
    o.retry_min = 1ms;
    o.retry_max = 20ms;
    o.quarantine = quarantine_log_.get();
    return o;
  }
  OwnershipOptions ownership(const std::string& id) {
    OwnershipOptions o;
    o.node_id = id;
    o.shard_count = kShards;
    o.ttl = kTtl;
    o.margin = kMargin;
    return o;
  }

  // Appends one message to every shard in turn until stopped (a -> b of that shard, numbered per shard).
  void start_producer() {
    producer_ = std::thread([this] {
      while (!stop_) {
        for (uint32_t s = 0; s < kShards && !stop_; ++s) append(s);
        std::this_thread::sleep_for(kProducerPause);  // the pace of the load, not a synchronisation
      }
    });
  }
  void append(uint32_t s) {
    std::lock_guard lock(mu_);
    const int n = static_cast<int>(bodies_[s].size());
    auto rec = testing::message_record(shards_, pairs_[s].first, pairs_[s].second, n, now_ms());
    rec.message.body = "shard " + std::to_string(s) + " message " + std::to_string(n);
    rec.identity = make_identity(rec.identity.id, rec.message, rec.chunks);
    auto off = log_->append_sync(s, "", encode_dispatch_record(rec));
    ASSERT_TRUE(off.ok());
    ASSERT_EQ(off->value, static_cast<uint64_t>(n));
    bodies_[s].push_back(rec.message.body);
  }
  void stop_producer() {
    stop_ = true;
    if (producer_.joinable()) producer_.join();
  }
  static int64_t now_ms() {
    return SystemClock().now_ms();
  }

  // Polls `done` until it holds or the deadline passes (then fails naming `what`).
  template <typename F>
  void await(F done, std::chrono::milliseconds limit, const std::string& what) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "timed out waiting for " << what;
      std::this_thread::sleep_for(10ms);
    }
  }
  static size_t count(const MailboxNode& n) {
    return n.owned().size();
  }
  size_t messages() {
    std::lock_guard lock(mu_);
    size_t n = 0;
    for (const auto& [s, b] : bodies_) n += b.size();
    return n;
  }
  void await_more_messages(size_t k) {
    const size_t target = messages() + k;
    await([&] { return messages() >= target; }, kSlack, "the producer to append more");
  }

  // Every shard's frontier, read by `reader`, covers every record of its partition.
  bool all_materialised(MailboxStore& reader) {
    for (uint32_t s = 0; s < kShards; ++s) {
      const uint64_t end = log_->end_offset(s).value().value;
      if (end == 0) continue;
      auto w = reader.lane_watermarks(ShardId{s}, Epoch{kMaxEpoch});
      if (!w.ok() || (*w)[0].is_zero() || (*w)[0].offset().value + 1 < end) return false;
    }
    return true;
  }
  // Through a store instance of its own: every message of every shard exactly once, chains unbroken.
  void expect_every_message_once() {
    auto reader = open_store();
    ASSERT_NE(reader, nullptr);
    await([&] { return all_materialised(*reader); }, 60s, "every shard to be materialised");
    std::lock_guard lock(mu_);
    for (uint32_t s = 0; s < kShards; ++s) {
      SCOPED_TRACE("shard " + std::to_string(s));
      testing::expect_exactly_once(testing::read_whole_mailbox(*reader, pairs_[s].second), bodies_[s]);
    }
  }

  std::vector<std::string> endpoints_;  // redis
  std::string prefix_;                  // redis
  std::string keyspace_;                // cql
  testing::TempDir dir_;
  ShardMap shards_ = ShardMap::create(kShards).value();
  std::unique_ptr<EmbeddedLog> log_;
  std::unique_ptr<EmbeddedLog> quarantine_log_;
  std::map<uint32_t, std::pair<UserId, UserId>> pairs_;
  std::mutex mu_;
  std::map<uint32_t, std::vector<std::string>> bodies_;  // guarded by mu_
  std::atomic<bool> stop_{false};
  std::thread producer_;
};

class QIM_FAILOVER_FIXTURE : public ShardFailoverTest {};

TEST_F(QIM_FAILOVER_FIXTURE, AJoiningNodeGetsHalfAndADeadNodesShardsMoveAtHigherEpochsExactlyOnce) {
  auto store1 = open_store();
  auto store2 = open_store();
  ASSERT_TRUE(store1 && store2);
  testing::WriteCountingStore counted1(*store1);
  CuttableLeases leases1(open_leases());
  auto leases2 = open_leases();
  MailboxNode n1(*log_, counted1, nullptr, node_options());
  MailboxNode n2(*log_, *store2, nullptr, node_options());
  ASSERT_TRUE(n1.start().ok());
  ASSERT_TRUE(n2.start().ok());

  ShardOwnership o1(n1, leases1, counted1, ownership("node-1"));
  ASSERT_TRUE(o1.start().ok());
  // Every free shard is node 1's; the first scan's takes share a time budget (shard_ownership.h), so a
  // loaded lease store may leave some of them to the next scan.
  await([&] { return count(n1) == kShards; }, kSlack, "node 1 to take every shard");
  start_producer();

  // Node 2 joins: node 1 gives up half, drained, and node 2 takes them at higher epochs.
  ShardOwnership o2(n2, *leases2, *store2, ownership("node-2"));
  ASSERT_TRUE(o2.start().ok());
  await([&] { return count(n1) == 8 && count(n2) == 8; }, kSlack, "the 8/8 rebalance");
  std::map<uint32_t, Epoch> epochs1;
  for (const auto& [s, e] : n1.owned()) epochs1[s.value] = e;
  for (const auto& [s, e] : n2.owned()) EXPECT_GE(e, Epoch{2}) << "shard " << s.value;

  // Node 1 can no longer reach the lease store (frozen loop, partition): it stops writing its shards at
  // ttl - margin, and node 2 takes them once the store has freed them.
  leases1.cut = true;
  const auto cut_at = std::chrono::steady_clock::now();
  await([&] { return count(n2) == kShards; }, kTakeoverBound + kSlack, "node 2 to take node 1's shards");
  const auto took = std::chrono::steady_clock::now() - cut_at;
  const uint64_t writes_at_takeover = counted1.writes.load();
  std::cout << "takeover after the cut: "
            << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms (bound "
            << kTakeoverBound.count() << " ms)\n";
  for (const auto& [s, e] : n2.owned()) {
    if (epochs1.contains(s.value)) {
      EXPECT_GT(e, epochs1[s.value]) << "shard " << s.value;
    }
  }
  await([&] { return count(n1) == 0; }, kSlack, "node 1 to drop its lapsed shards");
  EXPECT_EQ(o1.metrics().lost, 8u);
  EXPECT_FALSE(n1.fatal().has_value());

  await_more_messages(64);  // node 2 alone materialises what the producer goes on appending
  stop_producer();
  expect_every_message_once();
  EXPECT_EQ(counted1.writes.load(), writes_at_takeover) << "node 1 wrote after it lost its leases";

  // Node 1 reconnects: it takes back its share at still higher epochs, over a frontier cache of the epoch it
  // had before, and every message is still there exactly once.
  leases1.cut = false;
  await([&] { return count(n1) == 8 && count(n2) == 8; }, kSlack, "the rebalance after node 1 is back");
  stop_ = false;
  start_producer();
  await_more_messages(64);
  stop_producer();
  expect_every_message_once();
  EXPECT_GT(counted1.writes.load(), writes_at_takeover);  // node 1 writes again, under new leases
  o2.stop();
  o1.stop();
}

}  // namespace
}  // namespace qim
