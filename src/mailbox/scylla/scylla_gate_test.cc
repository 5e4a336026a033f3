// The CQL contract gate of ADR-0022 ("Acceptance"), against a real Cassandra/ScyllaDB cluster at
// QIM_TEST_CQL_HOSTS (skipped when unset). With QIM_TEST_CQL_CLUSTER=1 the keyspace has RF 3 and one
// case stops a node mid-page. Each test works on its own shard of one keyspace made for this run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "mailbox/contract_store.h"
#include "mailbox/scylla/scylla_backend.h"
#include "mailbox/scylla/write_timestamps.h"
#include "mailbox/tests/contract_helpers.h"

namespace qim {
namespace {

using test::fails_with;
using test::is_ok;
using test::make_message;
using test::make_record;
using test::seq_of;

constexpr uint32_t kShards = 256;
constexpr int64_t kNoon = 20'000 * kDayMs + kDayMs / 2;

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before threads start
  return v && *v ? std::optional<std::string>(v) : std::nullopt;
}

bool cluster_mode() {
  return env("QIM_TEST_CQL_CLUSTER") == "1";
}

class ScyllaGate : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!env("QIM_TEST_CQL_HOSTS")) return;
    keyspace_ = "qim_gate_" + std::to_string(::getpid()) + "_" + std::to_string(std::time(nullptr) % 100000);
    auto s = cql::Session::connect({.hosts = cql::split_hosts(*env("QIM_TEST_CQL_HOSTS"))});
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    raw_ = new cql::Session(std::move(s).value());
  }
  static void TearDownTestSuite() {
    if (raw_ == nullptr) return;
    (void)raw_->query("DROP KEYSPACE IF EXISTS " + keyspace_, {}, cql::ExecOptions{.timeout_ms = 60'000});
    delete raw_;
    raw_ = nullptr;
  }

  void SetUp() override {
    if (!env("QIM_TEST_CQL_HOSTS"))
      GTEST_SKIP() << "QIM_TEST_CQL_HOSTS is unset: no CQL cluster to test against";
    shard_ = ShardId{next_shard_++};
    clock_ = std::make_shared<ManualClock>(kNoon);
    context_.shards = *ShardMap::create(kShards);
    context_.clock = clock_;
    ASSERT_TRUE(is_ok(open()));
  }

  Status open(std::optional<uint32_t> page_max = std::nullopt) {
    store_.reset();
    ScyllaConfig config;
    config.hosts = cql::split_hosts(*env("QIM_TEST_CQL_HOSTS"));
    config.keyspace = keyspace_;
    config.replication_factor = cluster_mode() ? 3 : 1;
    config.request_timeout_ms = 15'000;
    QIM_ASSIGN_OR_RETURN(auto backend, open_scylla_backend(context_, config));
    store_ = std::make_unique<ContractStore>(std::move(backend), context_, page_max);
    return {};
  }

  UserId user(int n) const { return test::user_in_shard(context_.shards, shard_, n); }
  DispatchRecord record(int id, int chunks = 1) const {
    std::vector<std::vector<UserId>> c;
    for (int i = 0; i < chunks; ++i) c.push_back({user(i)});
    return make_record("d" + std::to_string(id), make_message(id, user(0), clock_->now_ms()), c);
  }
  Result<FinishOutcome> materialise(const DispatchRecord& r, uint64_t offset, MailboxSeq previous,
                                    uint32_t epoch = 1) {
    return test::materialise(*store_, shard_, Epoch{epoch}, r, Offset{offset}, previous);
  }
  Result<cql::Rows> raw(const std::string& cql, const cql::Values& values = {}) {
    auto r = raw_->query(cql, values, cql::ExecOptions{.consistency = cql::Consistency::kQuorum});
    if (!r.ok()) return Error(Errc::kTransport, r.error().to_string());
    return std::move(r).value();
  }
  std::string table(const char* name) const { return keyspace_ + "." + name; }

  static inline std::string keyspace_;
  static inline cql::Session* raw_ = nullptr;
  static inline std::atomic<uint32_t> next_shard_{1};
  ShardId shard_;
  std::shared_ptr<ManualClock> clock_;
  BackendContext context_;
  std::unique_ptr<MailboxStore> store_;
};

TEST_F(ScyllaGate, ManifestNotFullyWrittenIsZeroAdvance) {
  auto r = record(1, 2);
  ASSERT_TRUE(is_ok(store_->begin_dispatch(shard_, Epoch{1}, r.identity, Offset{10})));
  ASSERT_TRUE(is_ok(store_->write_chunks(shard_, Epoch{1}, test::chunk_writes(r, {0}))));
  EXPECT_TRUE(fails_with(
      store_->finish_dispatch(shard_, Epoch{1}, r.identity.id, uniform_advances({}, seq_of(1, 10))),
      Errc::kIncomplete));
  EXPECT_EQ(*test::frontier_of(*store_, shard_, Epoch{1}), MailboxSeq{});
}

TEST_F(ScyllaGate, NonCanonicalFinalObservationIsZeroAdvance) {
  auto r = record(2);
  ASSERT_TRUE(is_ok(materialise(r, 10, {})));
  auto again = materialise(r, 12, seq_of(1, 10));
  ASSERT_TRUE(is_ok(again));
  EXPECT_FALSE(again->advanced);
  EXPECT_EQ(*test::frontier_of(*store_, shard_, Epoch{1}), seq_of(1, 10));
}

TEST_F(ScyllaGate, InconsistentExpectedPreviousAndSingleLaneAdvancesRefused) {
  auto r = record(3);
  ASSERT_TRUE(is_ok(store_->begin_dispatch(shard_, Epoch{1}, r.identity, Offset{5})));
  ASSERT_TRUE(is_ok(store_->write_chunks(shard_, Epoch{1}, test::chunk_writes(r))));
  auto advances = uniform_advances({}, seq_of(1, 5));
  advances[17].expected_previous = seq_of(1, 1);
  EXPECT_TRUE(
      fails_with(store_->finish_dispatch(shard_, Epoch{1}, r.identity.id, advances), Errc::kInvariant));
  LaneAdvances one = {LaneAdvance{Lane{3}, {}, seq_of(1, 5)}};
  EXPECT_TRUE(fails_with(store_->finish_dispatch(shard_, Epoch{1}, r.identity.id, one), Errc::kInvariant));
  EXPECT_EQ(*test::frontier_of(*store_, shard_, Epoch{1}), MailboxSeq{});
}

TEST_F(ScyllaGate, ChainedPageFinishesWithOneFrontierWrite) {
  std::vector<DispatchRecord> records;
  std::vector<PageItem> page;
  MailboxSeq prev;
  for (int i = 0; i < 5; ++i) {
    records.push_back(record(100 + i));
    const uint64_t offset = 20 + i;
    ASSERT_TRUE(is_ok(store_->begin_dispatch(shard_, Epoch{1}, records.back().identity, Offset{offset})));
    ASSERT_TRUE(is_ok(store_->write_chunks(shard_, Epoch{1}, test::chunk_writes(records.back()))));
    page.push_back(PageItem{records.back().identity.id, uniform_advances(prev, seq_of(1, offset))});
    prev = seq_of(1, offset);
  }
  const OpCounts before = store_->op_counts();
  auto out = store_->finish_dispatch_page(shard_, Epoch{1}, page);
  ASSERT_TRUE(is_ok(out));
  const OpCounts delta = store_->op_counts() - before;
  EXPECT_EQ(out->frontier_writes, 1u);
  EXPECT_EQ(delta.updates, 1u);  // the frontier, nothing else
  EXPECT_EQ(delta.lwts, 0u);
  EXPECT_EQ(*test::frontier_of(*store_, shard_, Epoch{1}), seq_of(1, 24));
}

TEST_F(ScyllaGate, BrokenChainIsWatermarkGapAndFrontierStays) {
  auto a = record(200), b = record(201);
  ASSERT_TRUE(is_ok(store_->begin_dispatch(shard_, Epoch{1}, a.identity, Offset{30})));
  ASSERT_TRUE(is_ok(store_->begin_dispatch(shard_, Epoch{1}, b.identity, Offset{31})));
  ASSERT_TRUE(is_ok(store_->write_chunks(shard_, Epoch{1}, test::chunk_writes(a))));
  ASSERT_TRUE(is_ok(store_->write_chunks(shard_, Epoch{1}, test::chunk_writes(b))));
  std::vector<PageItem> page = {{a.identity.id, uniform_advances({}, seq_of(1, 30))},
                                {b.identity.id, uniform_advances(seq_of(1, 29), seq_of(1, 31))}};
  EXPECT_TRUE(fails_with(store_->finish_dispatch_page(shard_, Epoch{1}, page), Errc::kWatermarkGap));
  EXPECT_EQ(*test::frontier_of(*store_, shard_, Epoch{1}), MailboxSeq{});
  auto visible = test::read_all(*store_, user(0));
  ASSERT_TRUE(is_ok(visible));
  EXPECT_TRUE(visible->empty());
}

TEST_F(ScyllaGate, FrontierWritetimeIsItsOffset) {
  ASSERT_TRUE(is_ok(materialise(record(300), 4242, {})));
  auto rows = raw("SELECT frontier_offset, WRITETIME(frontier_offset) FROM " +
                      table("mailbox_shard_frontier") + " WHERE shard = ? AND epoch = 1",
                  cql::Values().int32(static_cast<int32_t>(shard_.value)));
  ASSERT_TRUE(is_ok(rows));
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(*(*rows)[0].get_i64(0), 4242);
  EXPECT_EQ(*(*rows)[0].get_i64(1), 4242);
}

TEST_F(ScyllaGate, IdentityWritetimeIsFirstWriterTimestampWithTtl) {
  auto r = record(301);
  ASSERT_TRUE(is_ok(materialise(r, 777, {})));
  auto rows = raw("SELECT WRITETIME(canonical_offset), TTL(canonical_offset), WRITETIME(digest) FROM " +
                      table("mailbox_dispatch") + " WHERE shard = ? AND epoch = 1 AND dispatch_id = ?",
                  cql::Values().int32(static_cast<int32_t>(shard_.value)).text(r.identity.id.str()));
  ASSERT_TRUE(is_ok(rows));
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(*(*rows)[0].get_i64(0), static_cast<int64_t>(kMaxOffset - 777));
  EXPECT_EQ(*(*rows)[0].get_i64(2), static_cast<int64_t>(kMaxOffset - 777));
  const int32_t ttl = *(*rows)[0].get_i32(1);
  EXPECT_LE(ttl, kDispatchIdentityTtlSeconds);
  EXPECT_GT(ttl, kDispatchIdentityTtlSeconds - 600);
}

TEST_F(ScyllaGate, SameIdWithAnotherDigestIsDispatchConflict) {
  auto r = record(302);
  ASSERT_TRUE(is_ok(materialise(r, 40, {})));
  auto other = r;
  other.identity.digest ^= 1;
  EXPECT_TRUE(fails_with(store_->begin_dispatch(shard_, Epoch{1}, other.identity, Offset{41}),
                         Errc::kDispatchConflict));
}

TEST_F(ScyllaGate, LateLowerTimestampWriteMovesNothingBack) {
  ASSERT_TRUE(is_ok(materialise(record(303), 100, {})));
  // A stale writer's late frontier write at offset 50 (timestamp 50) loses to the stored 100.
  ASSERT_TRUE(is_ok(raw("UPDATE " + table("mailbox_shard_frontier") +
                            " USING TIMESTAMP 50 SET frontier_offset = 50 WHERE shard = ? AND epoch = 1",
                        cql::Values().int32(static_cast<int32_t>(shard_.value)))));
  // Likewise a late identity observation at a later offset (lower timestamp) does not replace the first.
  auto r = record(304);
  ASSERT_TRUE(is_ok(materialise(r, 101, seq_of(1, 100))));
  ASSERT_TRUE(
      is_ok(raw("INSERT INTO " + table("mailbox_dispatch") +
                    " (shard, epoch, dispatch_id, digest, manifest, canonical_offset) VALUES (?, 1, ?, 0, "
                    "0x00, 999) USING TIMESTAMP " +
                    std::to_string(kMaxOffset - 999),
                cql::Values().int32(static_cast<int32_t>(shard_.value)).text(r.identity.id.str()))));
  ASSERT_TRUE(is_ok(open()));
  EXPECT_EQ(*test::frontier_of(*store_, shard_, Epoch{1}), seq_of(1, 101));
  auto progress = store_->dispatch_progress(shard_, Epoch{1}, r.identity.id);
  ASSERT_TRUE(is_ok(progress));
  EXPECT_EQ(progress->canonical_offset, Offset{101});
}

TEST_F(ScyllaGate, WallClockTimestampedFrontierReadsAsCorruptEntry) {
  ASSERT_TRUE(is_ok(raw(
      "UPDATE " + table("mailbox_shard_frontier") + " SET frontier_offset = 7 WHERE shard = ? AND epoch = 1",
      cql::Values().int32(static_cast<int32_t>(shard_.value)))));
  EXPECT_TRUE(fails_with(store_->lane_watermarks(shard_, Epoch{1}), Errc::kCorruptEntry));
  EXPECT_TRUE(fails_with(store_->read_mailbox(MailboxQuery{user(0), {}, 10}), Errc::kCorruptEntry));
}

TEST_F(ScyllaGate, HigherEpochFrontierIsRefused) {
  ASSERT_TRUE(is_ok(raw("UPDATE " + table("mailbox_shard_frontier") +
                            " USING TIMESTAMP 9 SET frontier_offset = 9 WHERE shard = ? AND epoch = 4",
                        cql::Values().int32(static_cast<int32_t>(shard_.value)))));
  EXPECT_TRUE(fails_with(store_->lane_watermarks(shard_, Epoch{3}), Errc::kEpochAhead));
  EXPECT_TRUE(fails_with(store_->begin_dispatch(shard_, Epoch{3}, record(305).identity, Offset{10}),
                         Errc::kEpochAhead));
  EXPECT_EQ(*test::frontier_of(*store_, shard_, Epoch{4}), seq_of(4, 9));
}

TEST_F(ScyllaGate, RepeatedObservationReusesCanonicalSequenceWithoutRewrite) {
  auto r = record(306);
  ASSERT_TRUE(is_ok(materialise(r, 60, {})));
  const OpCounts before = store_->op_counts();
  auto begun = store_->begin_dispatch(shard_, Epoch{1}, r.identity, Offset{65});
  ASSERT_TRUE(is_ok(begun));
  EXPECT_EQ(begun->kind, BeginKind::kExisting);
  EXPECT_EQ(begun->seq, seq_of(1, 60));
  EXPECT_FALSE(begun->needs_entries);
  EXPECT_EQ((store_->op_counts() - before).inserts, 0u);
  auto entries = test::read_all(*store_, user(0));
  ASSERT_TRUE(is_ok(entries));
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].seq, seq_of(1, 60));
}

TEST_F(ScyllaGate, GcAlwaysReturnsZero) {
  ASSERT_TRUE(is_ok(materialise(record(307), 70, {})));
  auto gc = store_->gc_completed_dispatches();
  ASSERT_TRUE(is_ok(gc));
  EXPECT_EQ(*gc, 0u);
}

TEST_F(ScyllaGate, HotPathHasNoLwtOnceTheLedgerCacheIsWarm) {
  MailboxSeq prev;
  ASSERT_TRUE(is_ok(materialise(record(400), 80, prev)));  // registers the users' day: LWT
  prev = seq_of(1, 80);
  const OpCounts before = store_->op_counts();
  for (int i = 1; i <= 5; ++i) {
    ASSERT_TRUE(is_ok(materialise(record(400 + i), 80 + i, prev)));
    prev = seq_of(1, 80 + i);
  }
  const OpCounts delta = store_->op_counts() - before;
  EXPECT_EQ(delta.lwts, 0u);
  EXPECT_EQ(delta.reads, 5u);     // identity
  EXPECT_EQ(delta.inserts, 10u);  // identity + entry
  EXPECT_EQ(delta.updates, 10u);  // proof + frontier
}

// Entries live retention + slack in real time on the server; the bucket bookkeeping follows the clock.
TEST_F(ScyllaGate, RetentionTtlWidensGapButOnlyTheSweepMovesTheTrim) {
  context_.retention_ms = 1000;
  context_.entry_ttl_slack_ms = 1000;
  ASSERT_TRUE(is_ok(open()));
  const UserId u = user(0);
  MailboxSeq prev;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(is_ok(materialise(record(500 + i), 90 + i, prev)));
    prev = seq_of(1, 90 + i);
  }
  auto fresh = test::read_all(*store_, u);
  ASSERT_TRUE(is_ok(fresh));
  ASSERT_EQ(fresh->size(), 3u);
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));  // the server's TTL, not a timing assertion
  auto gone = store_->read_mailbox(MailboxQuery{u, {}, 10});
  ASSERT_TRUE(is_ok(gone));
  EXPECT_TRUE(gone->entries.empty());
  EXPECT_EQ(gone->trim, MailboxSeq{});  // TTL alone never moves the trim
  EXPECT_FALSE(gone->gap_through.has_value());
  clock_->advance_ms(2 * kDayMs);  // the bucket may now be swept
  auto gap = store_->read_mailbox(MailboxQuery{u, seq_of(1, 90), 10});
  ASSERT_TRUE(is_ok(gap));
  EXPECT_EQ(gap->gap_through, seq_of(1, 92));
  EXPECT_EQ(gap->trim, MailboxSeq{});
  auto swept = store_->sweep_retention(u);
  ASSERT_TRUE(is_ok(swept));
  EXPECT_EQ(swept->trim, seq_of(1, 92));
  EXPECT_TRUE(fails_with(store_->read_mailbox(MailboxQuery{u, seq_of(1, 90), 10}), Errc::kExpiredCursor));
}

TEST_F(ScyllaGate, MissingProofFailsClosed) {
  const UserId u = user(0);
  ASSERT_TRUE(is_ok(materialise(record(600), 95, {})));
  const DayBucket day = day_bucket_of(clock_->now_ms());
  ASSERT_TRUE(is_ok(
      raw("DELETE FROM " + table("mailbox_retention_bucket_v2") + " WHERE user_id = ? AND day_bucket = ?",
          cql::Values().text(u.str()).bigint(day.value))));
  clock_->advance_ms(40 * kDayMs);
  EXPECT_TRUE(fails_with(store_->sweep_retention(u), Errc::kProofMissing));
  EXPECT_TRUE(fails_with(store_->read_mailbox(MailboxQuery{u, {}, 10}), Errc::kProofMissing));
  auto ledger = raw("SELECT trim_seq FROM " + table("mailbox_retention_meta") + " WHERE user_id = ?",
                    cql::Values().text(u.str()));
  ASSERT_TRUE(is_ok(ledger));
  ASSERT_EQ(ledger->size(), 1u);
  EXPECT_EQ(*(*ledger)[0].get_i64(0), 0);  // the trim did not move
}

TEST_F(ScyllaGate, OneNodeOfThreeStoppedMidPageKeepsQuorumWritesWorking) {
  if (!cluster_mode()) GTEST_SKIP() << "needs the three-node cluster (QIM_TEST_CQL_CLUSTER=1)";
  const std::string script = std::string(QIM_SOURCE_DIR) + "/scripts/engines/cassandra.sh";
  std::vector<DispatchRecord> records;
  std::vector<PageItem> page;
  MailboxSeq prev;
  for (int i = 0; i < 8; ++i) {
    records.push_back(record(700 + i));
    const uint64_t offset = 200 + i;
    ASSERT_TRUE(is_ok(store_->begin_dispatch(shard_, Epoch{1}, records.back().identity, Offset{offset})));
    if (i == 4) {
      ASSERT_EQ(std::system(("bash " + script + " stop-node 3 >/dev/null").c_str()), 0);
    }
    ASSERT_TRUE(is_ok(store_->write_chunks(shard_, Epoch{1}, test::chunk_writes(records.back()))));
    page.push_back(PageItem{records.back().identity.id, uniform_advances(prev, seq_of(1, offset))});
    prev = seq_of(1, offset);
    // Nothing is readable above the frontier while the page is open.
    auto visible = store_->read_mailbox(MailboxQuery{user(0), {}, 100});
    ASSERT_TRUE(is_ok(visible));
    EXPECT_TRUE(visible->entries.empty());
  }
  auto out = store_->finish_dispatch_page(shard_, Epoch{1}, page);
  const int restarted = std::system(("bash " + script + " start-node 3 >/dev/null").c_str());
  ASSERT_TRUE(is_ok(out));
  EXPECT_EQ(out->frontier, seq_of(1, 207));
  auto visible = test::read_all(*store_, user(0));
  ASSERT_TRUE(is_ok(visible));
  EXPECT_EQ(visible->size(), 8u);
  EXPECT_EQ(restarted, 0);
}

}  // namespace
}  // namespace qim
