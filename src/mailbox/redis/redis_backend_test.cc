// The Redis store against a real redis-server (QIM_TEST_REDIS=host:port[,host:port]; skipped when
// unset). Each test works under a key prefix of its own and deletes only that prefix afterwards.
#include "mailbox/redis/redis_backend.h"

#include <gtest/gtest.h>

#include <latch>
#include <thread>

#include "mailbox/contract_store.h"
#include "mailbox/redis/packed_watermarks.h"
#include "mailbox/redis/redis_instance.h"
#include "mailbox/redis/redis_keys.h"
#include "mailbox/redis/redis_test_env.h"
#include "mailbox/store_options.h"

namespace qim {
namespace {

constexpr int64_t kStart = 20'000 * kDayMs;  // a fixed test time: day bucket 20000

MailboxSeq seq(uint32_t epoch, uint64_t offset) {
  return *compose(Epoch{epoch}, Offset{offset});
}

Message message(uint64_t id, int64_t time_ms) {
  Message m;
  m.id = MessageId{id};
  m.conversation = *ConversationId::parse("d:alice:bob");
  m.sender = *UserId::parse("alice");
  m.server_time_ms = time_ms;
  m.body = "body " + std::to_string(id);
  return m;
}

class RedisBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    endpoints_ = test_redis_endpoints();
    if (endpoints_.empty()) GTEST_SKIP() << kTestRedisSkipMessage;
    prefix_ = unique_test_prefix(::testing::UnitTest::GetInstance()->current_test_info()->name());
    context_.shards = *ShardMap::create(4);
    context_.clock = clock_;
    backend_ = open();
  }

  void TearDown() override {
    if (!prefix_.empty()) {
      auto cleaned = delete_test_prefix(endpoints_, prefix_);
      EXPECT_TRUE(cleaned.ok()) << cleaned.error().to_string();
    }
  }

  std::unique_ptr<StoreBackend> open() {
    RedisStoreOptions options;
    options.endpoints = endpoints_;
    options.key_prefix = prefix_;
    auto backend = open_redis_backend(context_, options);
    EXPECT_TRUE(backend.ok()) << backend.error().to_string();
    return backend.ok() ? std::move(backend).value() : nullptr;
  }

  // A plain connection to instance i, to look at what the store wrote.
  std::unique_ptr<RedisConnection> raw(size_t i = 0) {
    auto conn = RedisConnection::open(*RedisEndpoint::parse(endpoints_[i]), RedisTimeouts{});
    EXPECT_TRUE(conn.ok()) << conn.error().to_string();
    return std::move(conn).value();
  }
  RedisReply raw_run(const RedisCommand& cmd, size_t i = 0) {
    auto r = raw(i)->run(cmd);
    EXPECT_TRUE(r.ok()) << r.error().to_string();
    return r.ok() ? *r : RedisReply{};
  }
  // The instance holding shard s.
  size_t instance_of(ShardId s) const { return s.value % endpoints_.size(); }

  UserId user_on(ShardId shard, int skip = 0) const {
    for (int i = 0;; ++i) {
      UserId u = *UserId::parse("user" + std::to_string(i));
      if (context_.shards.shard_of(u) == shard && skip-- == 0) return u;
    }
  }

  std::vector<std::string> endpoints_;
  std::string prefix_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(kStart);
  BackendContext context_;
  std::unique_ptr<StoreBackend> backend_;
  const ShardId shard0_{0};
};

// ---------------------------------------------------------------------------------------- packed W

TEST_F(RedisBackendTest, PackedWIsOneValueOfSixtyFourLanesAndTheEpoch) {
  const OpCounts before = backend_->counters().snapshot();
  ASSERT_TRUE(backend_->write_frontier(shard0_, Epoch{3}, MailboxSeq{}, seq(3, 10)).ok());
  EXPECT_EQ((backend_->counters().snapshot() - before).lwts, 1u);

  RedisReply stored = raw_run({"GET", prefix_ + "w:0"}, instance_of(shard0_));
  ASSERT_EQ(stored.str.size(), 516u);
  auto decoded = decode_packed_watermarks(stored.str);
  ASSERT_TRUE(decoded.ok()) << decoded.error().to_string();
  EXPECT_EQ(*decoded, PackedWatermarks::uniform(seq(3, 10)));
  EXPECT_EQ(raw_run({"TYPE", prefix_ + "w:0"}, instance_of(shard0_)).str, "string");

  auto frontier = backend_->read_frontier(shard0_);
  ASSERT_TRUE(frontier.ok());
  EXPECT_EQ(*frontier, std::optional(seq(3, 10)));
  EXPECT_EQ(*backend_->read_frontier(ShardId{1}), std::nullopt);
}

TEST_F(RedisBackendTest, FrontierScriptRefusesAGapAndLeavesWAlone) {
  auto from_nothing = backend_->write_frontier(shard0_, Epoch{1}, seq(1, 5), seq(1, 6));
  ASSERT_FALSE(from_nothing.ok());
  EXPECT_EQ(from_nothing.code(), Errc::kWatermarkGap) << from_nothing.error().to_string();
  EXPECT_EQ(*backend_->read_frontier(shard0_), std::nullopt);

  ASSERT_TRUE(backend_->write_frontier(shard0_, Epoch{1}, MailboxSeq{}, seq(1, 10)).ok());
  auto gap = backend_->write_frontier(shard0_, Epoch{1}, seq(1, 5), seq(1, 20));
  ASSERT_FALSE(gap.ok());
  EXPECT_EQ(gap.code(), Errc::kWatermarkGap);
  EXPECT_NE(gap.error().message().find(seq_hex(seq(1, 10))), std::string::npos) << gap.error().message();
  EXPECT_EQ(*backend_->read_frontier(shard0_), std::optional(seq(1, 10)));
}

TEST_F(RedisBackendTest, FrontierScriptRefusesAStoredEpochAboveTheConfiguredOne) {
  ASSERT_TRUE(backend_->write_frontier(shard0_, Epoch{3}, MailboxSeq{}, seq(3, 10)).ok());
  auto behind = backend_->write_frontier(shard0_, Epoch{2}, seq(3, 10), seq(2, 20));
  ASSERT_FALSE(behind.ok());
  EXPECT_EQ(behind.code(), Errc::kEpochAhead) << behind.error().to_string();
  EXPECT_EQ(*backend_->read_frontier(shard0_), std::optional(seq(3, 10)));
}

TEST_F(RedisBackendTest, FrontierNeverMovesBackButANewEpochMovesOn) {
  ASSERT_TRUE(backend_->write_frontier(shard0_, Epoch{1}, MailboxSeq{}, seq(1, 10)).ok());
  auto back = backend_->write_frontier(shard0_, Epoch{1}, seq(1, 10), seq(1, 4));
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.code(), Errc::kInvariant) << back.error().to_string();
  EXPECT_EQ(*backend_->read_frontier(shard0_), std::optional(seq(1, 10)));

  ASSERT_TRUE(backend_->write_frontier(shard0_, Epoch{2}, seq(1, 10), seq(2, 1)).ok());
  EXPECT_EQ(*backend_->read_frontier(shard0_), std::optional(seq(2, 1)));
  auto decoded = decode_packed_watermarks(raw_run({"GET", prefix_ + "w:0"}, instance_of(shard0_)).str);
  EXPECT_EQ(decoded->epoch, Epoch{2});
}

TEST_F(RedisBackendTest, FrontierScriptDoubleChecksThatEveryLaneMovesTogether) {
  auto conn = raw(instance_of(shard0_));
  std::array<MailboxSeq, kLanes> lanes;
  lanes.fill(MailboxSeq{});
  lanes[5] = seq(1, 1);
  const std::string uniform_next = encode_packed_watermarks(PackedWatermarks::uniform(seq(1, 9)));
  const std::string key = prefix_ + "w:0";
  const std::string source(script_source(RedisScript::kWriteFrontier));

  auto odd_expected = conn->run({"EVAL", source, "1", key, "1", encode_packed_lanes(lanes), uniform_next});
  ASSERT_TRUE(odd_expected.ok());
  ASSERT_TRUE(odd_expected->is_error());
  Error e = redis_reply_error(*odd_expected, conn->endpoint());
  EXPECT_EQ(e.code(), Errc::kInvariant) << e.to_string();
  EXPECT_NE(e.message().find("lane 5"), std::string::npos) << e.message();

  auto odd_next_w = PackedWatermarks::uniform(seq(1, 9));
  odd_next_w.lanes[63] = seq(1, 8);
  lanes.fill(MailboxSeq{});
  auto odd_next = conn->run(
      {"EVAL", source, "1", key, "1", encode_packed_lanes(lanes), encode_packed_watermarks(odd_next_w)});
  ASSERT_TRUE(odd_next.ok());
  EXPECT_EQ(redis_reply_error(*odd_next, conn->endpoint()).code(), Errc::kInvariant);
  EXPECT_NE(odd_next->str.find("lane 63"), std::string::npos) << odd_next->str;
  EXPECT_TRUE(raw_run({"GET", key}, instance_of(shard0_)).is_nil());
}

TEST_F(RedisBackendTest, ACorruptPackedWIsRefusedOnReadAndWrite) {
  const size_t at = instance_of(shard0_);
  raw_run({"SET", prefix_ + "w:0", "not a packed W"}, at);
  EXPECT_EQ(backend_->read_frontier(shard0_).code(), Errc::kCorruptEntry);
  EXPECT_EQ(backend_->write_frontier(shard0_, Epoch{1}, MailboxSeq{}, seq(1, 1)).code(), Errc::kCorruptEntry);

  auto odd = PackedWatermarks::uniform(seq(1, 7));
  odd.lanes[9] = seq(1, 6);
  raw_run({"SET", prefix_ + "w:0", encode_packed_watermarks(odd)}, at);
  EXPECT_EQ(backend_->read_frontier(shard0_).code(), Errc::kCorruptEntry);
}

// ---------------------------------------------------------------------------------------- identity

TEST_F(RedisBackendTest, DispatchIdentityIsFirstWriterWinsUnderConcurrency) {
  constexpr int kThreads = 8;
  constexpr int kIds = 20;
  for (int n = 0; n < kIds; ++n) {
    const DispatchId id = *DispatchId::parse("race-" + std::to_string(n));
    std::vector<Result<std::optional<StoredIdentity>>> results(kThreads, Error(Errc::kNotFound, "not run"));
    std::latch go(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        const DispatchIdentity identity{id, static_cast<uint64_t>(1000 + t), Manifest{{1}}};
        go.arrive_and_wait();
        results[t] =
            backend_->claim_identity(shard0_, Epoch{1}, identity, Offset{static_cast<uint64_t>(100 + t)});
      });
    }
    for (auto& th : threads) th.join();
    int winners = 0, winner = -1;
    for (int t = 0; t < kThreads; ++t) {
      ASSERT_TRUE(results[t].ok()) << results[t].error().to_string();
      if (!results[t]->has_value()) ++winners, winner = t;
    }
    ASSERT_EQ(winners, 1) << "id " << n;
    for (int t = 0; t < kThreads; ++t) {
      if (t == winner) continue;
      EXPECT_EQ(results[t]->value().identity.digest, static_cast<uint64_t>(1000 + winner));
      EXPECT_EQ(results[t]->value().canonical_offset, Offset{static_cast<uint64_t>(100 + winner)});
    }
  }
}

TEST_F(RedisBackendTest, IdentityCarriesTheTtlAndANewEpochIsANewKey) {
  const DispatchId id = *DispatchId::parse("d-ttl");
  const DispatchIdentity identity{id, 7, Manifest{{2, 1}}};
  ASSERT_EQ(*backend_->claim_identity(shard0_, Epoch{1}, identity, Offset{40}), std::nullopt);
  const RedisReply ttl = raw_run({"TTL", prefix_ + "id:0:1:d-ttl"}, instance_of(shard0_));
  EXPECT_GT(ttl.integer, kDispatchIdentityTtlSeconds - 120);
  EXPECT_LE(ttl.integer, kDispatchIdentityTtlSeconds);

  auto again =
      backend_->claim_identity(shard0_, Epoch{1}, DispatchIdentity{id, 8, Manifest{{5}}}, Offset{41});
  ASSERT_TRUE(again.ok() && again->has_value());
  EXPECT_EQ((*again)->identity, identity);
  EXPECT_EQ((*again)->canonical_offset, Offset{40});
  auto read = backend_->read_identity(shard0_, Epoch{1}, id);
  ASSERT_TRUE(read.ok() && read->has_value());
  EXPECT_EQ((*read)->identity, identity);
  EXPECT_EQ((*read)->canonical_offset, Offset{40});

  EXPECT_EQ(*backend_->claim_identity(shard0_, Epoch{2}, identity, Offset{50}), std::nullopt);
  EXPECT_EQ(backend_->read_identity(shard0_, Epoch{2}, id)->value().canonical_offset, Offset{50});
  EXPECT_EQ(*backend_->read_identity(shard0_, Epoch{3}, id), std::nullopt);
}

// ---------------------------------------------------------------------------------------- scripts

TEST_F(RedisBackendTest, ScriptsAreLoadedAgainAfterNoscript) {
  for (size_t i = 0; i < endpoints_.size(); ++i) ASSERT_EQ(raw_run({"SCRIPT", "FLUSH"}, i).str, "OK");
  const OpCounts before = backend_->counters().snapshot();
  ASSERT_TRUE(backend_->write_frontier(shard0_, Epoch{1}, MailboxSeq{}, seq(1, 3)).ok());
  const OpCounts after = backend_->counters().snapshot() - before;
  EXPECT_EQ(after.lwts, 2u);     // the EVALSHA answered NOSCRIPT, and the one sent again
  EXPECT_EQ(after.scripts, 1u);  // SCRIPT LOAD
  EXPECT_EQ(*backend_->read_frontier(shard0_), std::optional(seq(1, 3)));

  // A pipeline of several calls after a flush (300 entries: three put_entries calls of at most 128):
  // the script is loaded once, and each call that got NOSCRIPT is sent once more.
  for (size_t i = 0; i < endpoints_.size(); ++i) raw_run({"SCRIPT", "FLUSH"}, i);
  std::vector<MailboxEntry> entries;
  for (int k = 0; k < 300; ++k) entries.push_back({user_on(shard0_, k), seq(1, 3), message(3, kStart)});
  const OpCounts before_put = backend_->counters().snapshot();
  ASSERT_TRUE(backend_->write_entries(shard0_, Epoch{1}, entries).ok());
  EXPECT_EQ((backend_->counters().snapshot() - before_put).scripts, 3u + 1u + 3u);
  for (const auto& e : entries) {
    auto read = backend_->read_entries(e.user, MailboxSeq{}, seq(1, 3), 10);
    ASSERT_TRUE(read.ok()) << read.error().to_string();
    EXPECT_EQ(*read, std::vector{e});
  }
}

// ---------------------------------------------------------------------------------------- entries

TEST_F(RedisBackendTest, EntriesAreExactIdempotentUpsertsOrderedAboveTwoToThe53) {
  const UserId u = user_on(shard0_);
  const uint32_t top = kMaxEpoch;
  std::vector<MailboxEntry> entries = {
      {u, seq(top, kMaxOffset), message(4, kStart)},
      {u, seq(top, kMaxOffset - 2), message(2, kStart)},
      {u, seq(1, 5), message(1, kStart)},
      {u, seq(top, kMaxOffset - 1), message(3, kStart)},
  };
  ASSERT_TRUE(backend_->write_entries(shard0_, Epoch{top}, entries).ok());
  ASSERT_TRUE(backend_->write_entries(shard0_, Epoch{top}, entries).ok());  // a replay: same result

  auto all = backend_->read_entries(u, MailboxSeq{}, seq(top, kMaxOffset), 100);
  ASSERT_TRUE(all.ok()) << all.error().to_string();
  ASSERT_EQ(all->size(), 4u);
  EXPECT_EQ((*all)[0], entries[2]);
  EXPECT_EQ((*all)[1], entries[1]);
  EXPECT_EQ((*all)[2], entries[3]);
  EXPECT_EQ((*all)[3], entries[0]);
  EXPECT_EQ(raw_run({"ZCARD", prefix_ + "mb:" + u.str()}, instance_of(shard0_)).integer, 4);

  // (after, upto] is exact even where doubles cannot tell the bounds apart.
  auto one = backend_->read_entries(u, seq(top, kMaxOffset - 2), seq(top, kMaxOffset - 1), 100);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, std::vector{entries[3]});
  auto limited = backend_->read_entries(u, MailboxSeq{}, seq(top, kMaxOffset), 2);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->size(), 2u);
  EXPECT_EQ(limited->back(), entries[1]);
}

TEST_F(RedisBackendTest, ExpiredEntriesAreFilteredOnRead) {
  const UserId u = user_on(shard0_);
  const MailboxEntry early{u, seq(1, 1), message(1, kStart)};
  ASSERT_TRUE(backend_->write_entries(shard0_, Epoch{1}, std::span(&early, 1)).ok());
  clock_->advance_ms(context_.entry_ttl_ms() / 2);
  const MailboxEntry late{u, seq(1, 2), message(2, clock_->now_ms())};
  ASSERT_TRUE(backend_->write_entries(shard0_, Epoch{1}, std::span(&late, 1)).ok());
  EXPECT_EQ(backend_->read_entries(u, MailboxSeq{}, seq(1, 9), 10)->size(), 2u);

  clock_->advance_ms(context_.entry_ttl_ms() / 2 + 1);  // past the first entry's TTL only
  auto read = backend_->read_entries(u, MailboxSeq{}, seq(1, 9), 1);
  ASSERT_TRUE(read.ok()) << read.error().to_string();
  EXPECT_EQ(*read, std::vector{late});  // the limit counts live entries, not the expired one skipped
}

TEST_F(RedisBackendTest, BucketProofsKeepTheMaximumOverEpochsAndRegisterTheLedger) {
  const UserId u = user_on(shard0_);
  const int64_t day10 = 10 * kDayMs, day11 = 11 * kDayMs;
  const std::vector<MailboxEntry> entries = {
      {u, seq(1, 5), message(1, day10)},
      {u, seq(2, 3), message(2, day10 + 5)},
      {u, seq(2, 4), message(3, day11)},
  };
  ASSERT_TRUE(backend_->write_entries(shard0_, Epoch{2}, entries).ok());
  const MailboxEntry lower{u, seq(1, 9), message(4, day10)};  // a late, lower write: the proof stays
  ASSERT_TRUE(backend_->write_entries(shard0_, Epoch{1}, std::span(&lower, 1)).ok());

  EXPECT_EQ(*backend_->read_bucket_proof(u, DayBucket{10}), std::optional(seq(2, 3)));
  EXPECT_EQ(*backend_->read_bucket_proof(u, DayBucket{11}), std::optional(seq(2, 4)));
  EXPECT_EQ(*backend_->read_bucket_proof(u, DayBucket{12}), std::nullopt);
  EXPECT_EQ(raw_run({"ZCARD", prefix_ + "pf:" + u.str() + ":10"}, instance_of(shard0_)).integer, 1);
  auto ledger = backend_->read_ledger(u);
  ASSERT_TRUE(ledger.ok()) << ledger.error().to_string();
  EXPECT_EQ(ledger->live_buckets, (std::vector<DayBucket>{{10}, {11}}));
  EXPECT_EQ(ledger->trim, MailboxSeq{});
}

TEST_F(RedisBackendTest, CommitSweepIsACompareAndSetThatDropsWhatItPassed) {
  const UserId u = user_on(shard0_);
  const std::vector<MailboxEntry> entries = {
      {u, seq(1, 5), message(1, 10 * kDayMs)},
      {u, seq(1, 6), message(2, 11 * kDayMs)},
  };
  ASSERT_TRUE(backend_->write_entries(shard0_, Epoch{1}, entries).ok());
  const RetentionLedger seen = *backend_->read_ledger(u);
  const std::vector<DayBucket> expired = {DayBucket{10}};

  RetentionLedger stale = seen;
  stale.live_buckets.pop_back();
  const OpCounts before = backend_->counters().snapshot();
  auto refused = backend_->commit_sweep(u, stale, seq(1, 5), expired);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), Errc::kInvariant) << refused.error().to_string();
  EXPECT_EQ((backend_->counters().snapshot() - before).lwts, 1u);
  stale = seen;
  stale.trim = seq(1, 1);
  EXPECT_EQ(backend_->commit_sweep(u, stale, seq(1, 5), expired).code(), Errc::kInvariant);
  EXPECT_EQ(*backend_->read_ledger(u)->live_buckets.begin(), DayBucket{10});

  ASSERT_TRUE(backend_->commit_sweep(u, seen, seq(1, 5), expired).ok());
  const RetentionLedger after = *backend_->read_ledger(u);
  EXPECT_EQ(after.trim, seq(1, 5));
  EXPECT_EQ(after.live_buckets, std::vector<DayBucket>{DayBucket{11}});
  EXPECT_EQ(*backend_->read_bucket_proof(u, DayBucket{10}), std::nullopt);
  EXPECT_EQ(raw_run({"ZCARD", prefix_ + "mb:" + u.str()}, instance_of(shard0_)).integer, 1);
  EXPECT_EQ(raw_run({"HLEN", prefix_ + "mv:" + u.str()}, instance_of(shard0_)).integer, 1);
  // The CAS saw the old ledger: sweeping with it again is refused.
  EXPECT_EQ(backend_->commit_sweep(u, seen, seq(1, 5), expired).code(), Errc::kInvariant);
}

// ---------------------------------------------------------------------------------------- instances

TEST_F(RedisBackendTest, ShardsAndTheirUsersLiveOnInstanceShardModN) {
  if (endpoints_.size() < 2) GTEST_SKIP() << "needs two instances in QIM_TEST_REDIS";
  for (uint32_t s = 0; s < 4; ++s) {
    const ShardId shard{s};
    ASSERT_TRUE(backend_->write_frontier(shard, Epoch{1}, MailboxSeq{}, seq(1, 1)).ok());
    const MailboxEntry e{user_on(shard), seq(1, 1), message(1, kStart)};
    ASSERT_TRUE(backend_->write_entries(shard, Epoch{1}, std::span(&e, 1)).ok());
    for (size_t i = 0; i < endpoints_.size(); ++i) {
      const int64_t expected = i == instance_of(shard) ? 1 : 0;
      EXPECT_EQ(raw_run({"EXISTS", prefix_ + "w:" + std::to_string(s)}, i).integer, expected);
      EXPECT_EQ(raw_run({"EXISTS", prefix_ + "mb:" + e.user.str()}, i).integer, expected);
    }
  }
}

TEST_F(RedisBackendTest, ThePoolIsBoundedAndWaitsForAFreeConnection) {
  RedisPool pool(*RedisEndpoint::parse(endpoints_[0]),
                 RedisTimeouts{std::chrono::milliseconds(500), std::chrono::milliseconds(200)}, 1);
  {
    auto held = pool.acquire();
    ASSERT_TRUE(held.ok()) << held.error().to_string();
    auto starved = pool.acquire();
    ASSERT_FALSE(starved.ok());
    EXPECT_EQ(starved.code(), Errc::kTimeout) << starved.error().to_string();

    std::thread returner([held = std::move(held).value()]() mutable {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    });  // the lease goes back when the thread's copy is destroyed
    auto waited = pool.acquire();
    returner.join();
    ASSERT_TRUE(waited.ok()) << waited.error().to_string();
    EXPECT_EQ((*waited)->run({"PING"})->str, "PONG");
  }
}

TEST(RedisBackendDown, OpeningAgainstNoRedisIsATransportErrorNamingTheEndpoint) {
  BackendContext context;
  context.clock = std::make_shared<SystemClock>();
  const std::string endpoint = "127.0.0.1:" + std::to_string(unused_loopback_port());
  auto backend = open_redis_backend(context, std::vector<std::string>{endpoint});
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.code(), Errc::kTransport) << backend.error().to_string();
  EXPECT_NE(backend.error().message().find(endpoint), std::string::npos);

  EXPECT_EQ(open_redis_backend(context, std::vector<std::string>{}).code(), Errc::kConfig);
  EXPECT_EQ(open_redis_backend(context, std::vector<std::string>{"localhost"}).code(), Errc::kConfig);
  EXPECT_EQ(open_redis_backend(context, std::vector<std::string>{"h:70000"}).code(), Errc::kConfig);
}

// ---------------------------------------------------------------------------------------- the contract

TEST_F(RedisBackendTest, ARecordThroughTheContractCostsTwoCasScriptsAndOneUpsert) {
  ContractStore store(open(), context_, std::nullopt);
  EXPECT_EQ(store.finish_page_limit(), 1u);
  EXPECT_EQ(store.backend_name(), "redis");
  const UserId bob = user_on(shard0_);
  const Message m = message(1, kStart);
  const std::vector<std::vector<UserId>> chunks = {{bob}};
  const DispatchIdentity identity = make_identity(*DispatchId::parse("d-1"), m, chunks);
  const ChunkWrite chunk{identity.id, 0, &m, chunks[0]};

  const OpCounts before = store.op_counts();
  auto begun = store.begin_dispatch(shard0_, Epoch{1}, identity, Offset{7});
  ASSERT_TRUE(begun.ok()) << begun.error().to_string();
  EXPECT_EQ(begun->kind, BeginKind::kFresh);
  ASSERT_TRUE(store.write_chunks(shard0_, Epoch{1}, std::span(&chunk, 1)).ok());
  auto finished =
      store.finish_dispatch(shard0_, Epoch{1}, identity.id, uniform_advances(MailboxSeq{}, seq(1, 7)));
  ASSERT_TRUE(finished.ok()) << finished.error().to_string();
  EXPECT_TRUE(finished->advanced);
  const OpCounts cost = store.op_counts() - before;
  EXPECT_EQ(cost.lwts, 2u);     // identity and frontier
  EXPECT_EQ(cost.scripts, 1u);  // the entry upsert
  EXPECT_EQ(cost.reads, 1u);    // the owner's first frontier load; cached afterwards
  EXPECT_EQ(cost.inserts + cost.updates, 0u);
  EXPECT_EQ(cost.frontier_writes, 1u);

  auto page = store.read_mailbox(MailboxQuery{bob, MailboxSeq{}, 10});
  ASSERT_TRUE(page.ok()) << page.error().to_string();
  ASSERT_EQ(page->entries.size(), 1u);
  EXPECT_EQ(page->entries[0].seq, seq(1, 7));
  EXPECT_EQ(page->entries[0].message, m);

  // Entries written but not yet under the frontier stay invisible.
  const Message m2 = message(2, kStart);
  const DispatchIdentity second = make_identity(*DispatchId::parse("d-2"), m2, chunks);
  const ChunkWrite chunk2{second.id, 0, &m2, chunks[0]};
  ASSERT_TRUE(store.begin_dispatch(shard0_, Epoch{1}, second, Offset{8}).ok());
  ASSERT_TRUE(store.write_chunks(shard0_, Epoch{1}, std::span(&chunk2, 1)).ok());
  EXPECT_EQ(store.read_mailbox(MailboxQuery{bob, MailboxSeq{}, 10})->entries.size(), 1u);
  ASSERT_TRUE(
      store.finish_dispatch(shard0_, Epoch{1}, second.id, uniform_advances(seq(1, 7), seq(1, 8))).ok());
  EXPECT_EQ(store.read_mailbox(MailboxQuery{bob, MailboxSeq{}, 10})->entries.size(), 2u);

  // A replay at a later offset reuses the canonical seq and is a zero advance.
  auto replay = store.begin_dispatch(shard0_, Epoch{1}, identity, Offset{9});
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ(replay->kind, BeginKind::kExisting);
  EXPECT_EQ(replay->canonical_offset, Offset{7});
  EXPECT_FALSE(replay->needs_entries);
  auto zero = store.finish_dispatch(shard0_, Epoch{1}, identity.id, uniform_advances(seq(1, 8), seq(1, 9)));
  ASSERT_TRUE(zero.ok()) << zero.error().to_string();
  EXPECT_FALSE(zero->advanced);

  DispatchIdentity other = identity;
  other.digest ^= 1;
  EXPECT_EQ(store.begin_dispatch(shard0_, Epoch{1}, other, Offset{11}).code(), Errc::kDispatchConflict);
}

}  // namespace
}  // namespace qim
