// The CQL contract gate of ADR-0022 ("Acceptance"), retention part: TTL against the sweep, bucket proofs
// (fail closed when missing, last-write-wins on their offset timestamp) and the ledger registration cache
// (one LWT per user and day, an expired bucket takes the expiry branch, a cache entry leaves with its
// bucket). The fixture is in scylla_gate_fixture.h.
#include <chrono>
#include <set>
#include <thread>

#include "mailbox/scylla/scylla_gate_fixture.h"

namespace qim {
namespace {

using test::fails_with;
using test::is_ok;
using test::seq_of;

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
// The TTL is 3 s: the server stamps expiry in whole seconds, so a cell lives between TTL - 1 and TTL
// seconds, and the first read must come before it can have expired even on a slow three-node ring.
TEST_F(ScyllaGate, RetentionTtlWidensGapButOnlyTheSweepMovesTheTrim) {
  context_.retention_ms = 2000;
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
  // Await the server's expiry (a condition, not a duration): every entry goes, none is left behind.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto gone = store_->read_mailbox(MailboxQuery{u, {}, 10});
  for (; is_ok(gone) && !gone->entries.empty(); gone = store_->read_mailbox(MailboxQuery{u, {}, 10})) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the entries did not expire";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
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

// bucket_max_seq is written USING TIMESTAMP offset, so the higher offset wins whatever order the writes
// land in: the proof of the record at 110 lands after the one at 120 (its chunks are written last in the
// page), then a stale writer's proof at 115 lands later still. The bucket's proof stays 120, and once the
// day is past retention a fresh store reports the gap and sweeps the trim up to 120, not below it.
TEST_F(ScyllaGate, BucketProofIsLastWriteWinsOnItsOffset) {
  const UserId u = user(0);
  const DayBucket day = day_bucket_of(clock_->now_ms());
  auto low = record(1000), high = record(1001);
  ASSERT_TRUE(is_ok(store_->begin_dispatch(shard_, Epoch{1}, low.identity, Offset{110})));
  ASSERT_TRUE(is_ok(store_->begin_dispatch(shard_, Epoch{1}, high.identity, Offset{120})));
  ASSERT_TRUE(is_ok(store_->write_chunks(shard_, Epoch{1}, test::chunk_writes(high))));
  ASSERT_TRUE(is_ok(store_->write_chunks(shard_, Epoch{1}, test::chunk_writes(low))));
  std::vector<PageItem> page = {{low.identity.id, uniform_advances({}, seq_of(1, 110))},
                                {high.identity.id, uniform_advances(seq_of(1, 110), seq_of(1, 120))}};
  ASSERT_TRUE(is_ok(store_->finish_dispatch_page(shard_, Epoch{1}, page)));
  ASSERT_TRUE(is_ok(
      raw("UPDATE " + table("mailbox_retention_bucket_v2") +
              " USING TIMESTAMP 115 SET bucket_max_seq = ? WHERE user_id = ? AND day_bucket = ? "
              "AND epoch = 1",
          cql::Values().bigint(scylla::seq_to_bigint(seq_of(1, 115))).text(u.str()).bigint(day.value))));
  auto proof =
      raw("SELECT bucket_max_seq, WRITETIME(bucket_max_seq) FROM " + table("mailbox_retention_bucket_v2") +
              " WHERE user_id = ? AND day_bucket = ? AND epoch = 1",
          cql::Values().text(u.str()).bigint(day.value));
  ASSERT_TRUE(is_ok(proof));
  ASSERT_EQ(proof->size(), 1u);
  EXPECT_EQ(scylla::seq_from_bigint(*(*proof)[0].get_i64(0)), seq_of(1, 120));
  EXPECT_EQ(*(*proof)[0].get_i64(1), 120);

  clock_->advance_ms(context_.retention_ms + kDayMs);  // the day may now be swept
  auto reader = fresh_store();
  ASSERT_TRUE(is_ok(reader));
  auto gap = (*reader)->read_mailbox(MailboxQuery{u, seq_of(1, 110), 10});
  ASSERT_TRUE(is_ok(gap));
  EXPECT_EQ(gap->gap_through, seq_of(1, 120));
  auto swept = (*reader)->sweep_retention(u);
  ASSERT_TRUE(is_ok(swept));
  EXPECT_EQ(swept->trim, seq_of(1, 120));
  EXPECT_EQ(swept->buckets_expired, 1u);
  auto after = test::read_all(**reader, u);
  ASSERT_TRUE(is_ok(after));
  EXPECT_TRUE(after->empty());  // nothing of the expired day is shown after the sweep
}

// The per-(user, day) registration cache: day D registers with an LWT, later records of D need none.
// Once D is past retention and swept, a late record of day D (a replay of an old message) takes the
// expiry branch before the cache: no LWT, D is not listed again, so the next sweep leaves the late
// record visible (were D re-registered, that sweep would trim it away at once). The cache entry of D left
// with its bucket: when the clock steps back into D's validity (a restart with an earlier clock offset),
// a record of D registers it again with an LWT instead of trusting a stale entry for a bucket the sweep
// has removed from the ledger.
TEST_F(ScyllaGate, LedgerCacheEntryExpiresWithItsBucketAndIsRegisteredAgain) {
  context_.retention_ms = 2 * kDayMs;
  ASSERT_TRUE(is_ok(open()));
  const UserId u = user(0);
  const int64_t day_d_time = clock_->now_ms();
  const DayBucket d = day_bucket_of(day_d_time);
  EXPECT_GE(lwts_of(record(1100), 300, {}), 1u);
  EXPECT_EQ(ledger_buckets(u), std::set<int64_t>{d.value});
  EXPECT_EQ(lwts_of(record(1101), 301, seq_of(1, 300)), 0u);  // cached

  clock_->set_ms((d.value + 3) * kDayMs + kDayMs / 2);  // D + 3: D is past retention, D + 1 is not
  ASSERT_TRUE(context_.bucket_expired(d, clock_->now_ms()));
  auto swept = store_->sweep_retention(u);
  ASSERT_TRUE(is_ok(swept));
  EXPECT_EQ(swept->trim, seq_of(1, 301));
  EXPECT_TRUE(ledger_buckets(u).empty());

  EXPECT_EQ(lwts_of(record(1102, 1, day_d_time), 302, seq_of(1, 301)), 0u);  // late record of day D
  EXPECT_TRUE(ledger_buckets(u).empty());
  auto reader = fresh_store();
  ASSERT_TRUE(is_ok(reader));
  auto again = (*reader)->sweep_retention(u);
  ASSERT_TRUE(is_ok(again));
  EXPECT_EQ(again->trim, seq_of(1, 301));
  auto visible = test::read_all(**reader, u);
  ASSERT_TRUE(is_ok(visible));
  EXPECT_EQ(seqs_of(*visible), std::vector<MailboxSeq>{seq_of(1, 302)});

  clock_->set_ms(day_d_time + 1000);  // back inside D's validity
  EXPECT_GE(lwts_of(record(1103, 1, day_d_time), 303, seq_of(1, 302)), 1u);
  EXPECT_EQ(ledger_buckets(u), std::set<int64_t>{d.value});
}

}  // namespace
}  // namespace qim
