// The MailboxStore contract suite, part 3: reads, dispatch progress and GC of identities, and retention
// (fixture in contract_fixture.h; ContractTest is instantiated in contract_test.cc, RetentionTest here).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "mailbox/store_options.h"
#include "mailbox/tests/contract_fixture.h"

namespace qim::test {
namespace {

// --- Reads ------------------------------------------------------------------------------------------

TEST_P(ContractTest, ReadsNeverReturnEntriesAboveTheFrontier) {
  const auto a = to_bob("a", 1);
  const auto b = to_bob("b", 2);
  ASSERT_TRUE(is_ok(materialise(a, 10, MailboxSeq{})));
  ASSERT_TRUE(is_ok(begin(b, 11)));
  ASSERT_TRUE(is_ok(write(b)));
  auto page = store().read_mailbox(MailboxQuery{bob_, MailboxSeq{}, 100});
  ASSERT_TRUE(is_ok(page));
  EXPECT_EQ(page->frontier, seq_of(1, 10));
  ASSERT_EQ(page->entries.size(), 1u);
  EXPECT_EQ(page->entries[0].seq, seq_of(1, 10));
  EXPECT_FALSE(page->more);
  auto after = store().read_mailbox(MailboxQuery{bob_, seq_of(1, 10), 100});
  ASSERT_TRUE(is_ok(after));
  EXPECT_TRUE(after->entries.empty());
}

TEST_P(ContractTest, ReadPagesFollowTheCursor) {
  MailboxSeq previous;
  for (uint64_t i = 1; i <= 7; ++i) {
    ASSERT_TRUE(is_ok(materialise(to_bob("d" + std::to_string(i), i), i, previous)));
    previous = seq_of(1, i);
  }
  auto first = store().read_mailbox(MailboxQuery{bob_, MailboxSeq{}, 3});
  ASSERT_TRUE(is_ok(first));
  ASSERT_EQ(first->entries.size(), 3u);
  EXPECT_TRUE(first->more);
  auto rest = store().read_mailbox(MailboxQuery{bob_, first->entries.back().seq, 10});
  ASSERT_TRUE(is_ok(rest));
  ASSERT_EQ(rest->entries.size(), 4u);
  EXPECT_EQ(rest->entries.front().seq, seq_of(1, 4));
  EXPECT_FALSE(rest->more);
  EXPECT_TRUE(mailbox(stranger_).empty());
}

// --- Dispatch progress and GC -----------------------------------------------------------------------

TEST_P(ContractTest, DispatchProgressFollowsTheRecord) {
  const auto r = record("d1", 1, {{bob_}, {carol_}, {alice_}});
  EXPECT_TRUE(fails_with(store().dispatch_progress(kShard, kEpoch, r.identity.id), Errc::kNotFound));
  ASSERT_TRUE(is_ok(begin(r, 10)));
  ASSERT_TRUE(is_ok(write(r, {0, 2})));
  auto partial = store().dispatch_progress(kShard, kEpoch, r.identity.id);
  ASSERT_TRUE(is_ok(partial));
  EXPECT_TRUE(partial->in_flight);
  EXPECT_EQ(partial->canonical_offset, Offset{10});
  EXPECT_EQ(partial->chunk_count, 3u);
  EXPECT_EQ(partial->completed_chunks, (std::vector<uint32_t>{0, 2}));

  restart();  // the in-process table is gone and the frontier does not cover the record
  auto unknown_progress = store().dispatch_progress(kShard, kEpoch, r.identity.id);
  ASSERT_TRUE(is_ok(unknown_progress));
  EXPECT_FALSE(unknown_progress->in_flight);
  EXPECT_EQ(unknown_progress->chunk_count, 3u);
  EXPECT_TRUE(unknown_progress->completed_chunks.empty());

  ASSERT_TRUE(is_ok(materialise(r, 10, MailboxSeq{})));
  auto finished = store().dispatch_progress(kShard, kEpoch, r.identity.id);
  ASSERT_TRUE(is_ok(finished));
  EXPECT_FALSE(finished->in_flight);
  EXPECT_EQ(finished->completed_chunks, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_TRUE(fails_with(store().dispatch_progress(kShard, Epoch{2}, r.identity.id), Errc::kNotFound))
      << "identities are per epoch";
}

TEST_P(ContractTest, GcKeepsLiveIdentities) {
  const auto r = to_bob("d1", 1);
  ASSERT_TRUE(is_ok(materialise(r, 10, MailboxSeq{})));
  auto removed = store().gc_completed_dispatches();
  ASSERT_TRUE(is_ok(removed));
  EXPECT_EQ(*removed, 0u) << "nothing has expired";
  auto again = begin(r, 11);
  ASSERT_TRUE(is_ok(again));
  EXPECT_EQ(again->kind, BeginKind::kExisting);
  EXPECT_FALSE(again->needs_entries);
}

TEST_P(ContractTest, IdentitiesExpireAfterThirtyOneDays) {
  SKIP_IF_LIMITED(no_clock_identity_ttl);
  const auto a = to_bob("a", 1);
  const auto b = to_bob("b", 2);
  ASSERT_TRUE(is_ok(materialise(a, 10, MailboxSeq{})));
  clock_->advance_ms(kDayMs);
  ASSERT_TRUE(is_ok(materialise(b, 11, seq_of(1, 10))));
  clock_->advance_ms(kDispatchIdentityTtlSeconds * 1000 - kDayMs);  // a is exactly 31 days old

  EXPECT_TRUE(fails_with(store().dispatch_progress(kShard, kEpoch, a.identity.id), Errc::kNotFound))
      << "an expired identity is absent";
  EXPECT_TRUE(is_ok(store().dispatch_progress(kShard, kEpoch, b.identity.id)));
  auto removed = store().gc_completed_dispatches();
  ASSERT_TRUE(is_ok(removed));
  EXPECT_EQ(*removed, 1u);
  auto b_again = begin(b, 12);
  ASSERT_TRUE(is_ok(b_again));
  EXPECT_EQ(b_again->kind, BeginKind::kExisting);
  clock_->advance_ms(kDayMs);
  removed = store().gc_completed_dispatches();
  ASSERT_TRUE(is_ok(removed));
  EXPECT_EQ(*removed, 1u);
  removed = store().gc_completed_dispatches();
  ASSERT_TRUE(is_ok(removed));
  EXPECT_EQ(*removed, 0u);
}

// --- Retention --------------------------------------------------------------------------------------

class RetentionTest : public ContractTest {
 protected:
  // Two records to bob on the start day (seqs 10, 11) and one the next day (seq 12).
  void SetUp() override {
    ContractTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_TRUE(is_ok(materialise(to_bob("d10", 10), 10, MailboxSeq{})));
    ASSERT_TRUE(is_ok(materialise(to_bob("d11", 11), 11, seq_of(1, 10))));
    clock_->advance_ms(kDayMs);
    ASSERT_TRUE(is_ok(materialise(to_bob("d12", 12), 12, seq_of(1, 11))));
  }
  // Moves the clock to where the start day's bucket may be swept, but not the next one.
  void expire_first_day() {
    clock_->set_ms((day_bucket_of(kStartMs).value + 1) * kDayMs + context_.retention_ms);
  }
  DayBucket first_day() const { return day_bucket_of(kStartMs); }
  DayBucket second_day() const { return DayBucket{first_day().value + 1}; }
};

TEST_P(RetentionTest, NothingExpiredSweepsNothing) {
  auto swept = store().sweep_retention(bob_);
  ASSERT_TRUE(is_ok(swept));
  EXPECT_EQ(swept->buckets_expired, 0u);
  EXPECT_EQ(swept->trim, MailboxSeq{});
  EXPECT_EQ(seqs(bob_).size(), 3u);
}

TEST_P(RetentionTest, ExpiredCursorAfterSweep) {
  expire_first_day();
  auto swept = store().sweep_retention(bob_);
  ASSERT_TRUE(is_ok(swept));
  EXPECT_EQ(swept->buckets_expired, 1u);
  EXPECT_EQ(swept->trim, seq_of(1, 11)) << "the trim moves to the expired bucket's proof";

  EXPECT_TRUE(fails_with(store().read_mailbox(MailboxQuery{bob_, seq_of(1, 10), 10}), Errc::kExpiredCursor));
  auto at_trim = store().read_mailbox(MailboxQuery{bob_, seq_of(1, 11), 10});
  ASSERT_TRUE(is_ok(at_trim));
  auto from_start = store().read_mailbox(MailboxQuery{bob_, MailboxSeq{}, 10});
  ASSERT_TRUE(is_ok(from_start));
  EXPECT_EQ(from_start->trim, seq_of(1, 11));
  ASSERT_EQ(from_start->entries.size(), 1u);
  EXPECT_EQ(from_start->entries[0].seq, seq_of(1, 12));

  restart();
  EXPECT_TRUE(fails_with(store().read_mailbox(MailboxQuery{bob_, seq_of(1, 10), 10}), Errc::kExpiredCursor))
      << "the trim survives a restart";
  auto again = store().sweep_retention(bob_);
  ASSERT_TRUE(is_ok(again));
  EXPECT_EQ(again->buckets_expired, 0u);
  EXPECT_EQ(again->trim, seq_of(1, 11));
}

TEST_P(RetentionTest, MissingProofFailsClosed) {
  ASSERT_TRUE(is_ok(session_->drop_proof(bob_, first_day())));
  expire_first_day();
  const OpCounts before = ops();
  EXPECT_TRUE(fails_with(store().sweep_retention(bob_), Errc::kProofMissing));
  EXPECT_EQ((ops() - before).lwts, 0u) << "nothing to commit: the trim does not move";
  // Had the trim moved past seq 10, this cursor would be expired; it fails closed on the proof instead.
  EXPECT_TRUE(fails_with(store().read_mailbox(MailboxQuery{bob_, seq_of(1, 10), 10}), Errc::kProofMissing));
  EXPECT_TRUE(fails_with(store().read_mailbox(MailboxQuery{bob_, MailboxSeq{}, 10}), Errc::kProofMissing));
}

TEST_P(RetentionTest, SweepStopsAtTheFirstMissingProof) {
  ASSERT_TRUE(is_ok(session_->drop_proof(bob_, second_day())));
  clock_->set_ms((second_day().value + 1) * kDayMs + context_.retention_ms);  // both days expired
  EXPECT_TRUE(fails_with(store().sweep_retention(bob_), Errc::kProofMissing));
  EXPECT_TRUE(fails_with(store().read_mailbox(MailboxQuery{bob_, seq_of(1, 10), 10}), Errc::kExpiredCursor))
      << "the trim moved past the day that had its proof";
  EXPECT_TRUE(fails_with(store().read_mailbox(MailboxQuery{bob_, seq_of(1, 11), 10}), Errc::kProofMissing));
}

TEST_P(RetentionTest, SweepNeverSkipsABucketWithoutProof) {
  ASSERT_TRUE(is_ok(session_->drop_proof(bob_, first_day())));
  clock_->set_ms((second_day().value + 1) * kDayMs + context_.retention_ms);  // both days expired
  EXPECT_TRUE(fails_with(store().sweep_retention(bob_), Errc::kProofMissing));
  // Had the sweep moved the trim to the second day's proof (seq 12), this cursor would be expired.
  EXPECT_TRUE(fails_with(store().read_mailbox(MailboxQuery{bob_, seq_of(1, 11), 10}), Errc::kProofMissing));
}

// The shard owner's sweep finds its users through this listing: every user with a ledger, in id order,
// paged by cursor, read through a fresh store; users of another shard are not listed.
TEST_P(RetentionTest, RetentionUsersListTheShardsLedgers) {
  ASSERT_TRUE(is_ok(materialise(record("d13", 13, {{carol_}}), 13, seq_of(1, 12))));
  restart();
  std::vector<std::string> expected = {alice_.str(), bob_.str(), carol_.str()};
  std::sort(expected.begin(), expected.end());
  const OpCounts before = ops();
  auto all = store().list_retention_users(kShard, "", 10);
  ASSERT_TRUE(is_ok(all));
  EXPECT_EQ((ops() - before).reads, 1u) << "one listing is one read";
  std::vector<std::string> got;
  for (const auto& u : *all) got.push_back(u.str());
  EXPECT_EQ(got, expected);

  std::vector<std::string> paged;
  std::string cursor;
  for (int round = 0; round < 5; ++round) {
    auto page = store().list_retention_users(kShard, cursor, 2);
    ASSERT_TRUE(is_ok(page));
    for (const auto& u : *page) paged.push_back(u.str());
    if (page->size() < 2) break;
    cursor = page->back().str();
  }
  EXPECT_EQ(paged, expected) << "pages follow the cursor, strictly after it";

  auto other = store().list_retention_users(ShardId{1}, "", 10);
  ASSERT_TRUE(is_ok(other));
  EXPECT_TRUE(other->empty()) << "no user of shard 1 has a ledger";

  // A sweep never unlists a user (a user whose ledger empties stays listed; its sweep finds nothing).
  expire_first_day();
  ASSERT_TRUE(is_ok(store().sweep_retention(alice_)));
  auto after_sweep = store().list_retention_users(kShard, "", 10);
  ASSERT_TRUE(is_ok(after_sweep));
  EXPECT_EQ(after_sweep->size(), 3u);
}

TEST_P(RetentionTest, TtlExpiryOnlyWidensAGap) {
  SKIP_IF_LIMITED(no_clock_entry_ttl);
  // Past the first day's entry TTL (written at 01:00, live retention + 1 day), before its second.
  clock_->set_ms(kStartMs + context_.entry_ttl_ms());
  auto page = store().read_mailbox(MailboxQuery{bob_, MailboxSeq{}, 10});
  ASSERT_TRUE(is_ok(page));
  EXPECT_EQ(page->trim, MailboxSeq{}) << "TTL never moves the trim";
  ASSERT_TRUE(page->gap_through.has_value());
  EXPECT_EQ(*page->gap_through, seq_of(1, 11));
  ASSERT_EQ(page->entries.size(), 1u) << "the expired entries are gone; the next day's remains";
  EXPECT_EQ(page->entries[0].seq, seq_of(1, 12));
  auto cursor = store().read_mailbox(MailboxQuery{bob_, seq_of(1, 10), 10});
  ASSERT_TRUE(is_ok(cursor)) << "a cursor inside the gap is not expired: only the sweep expires cursors";
  EXPECT_EQ(cursor->gap_through, seq_of(1, 11));
}

// Buckets follow a message's server time, seqs the mailbox log's order: a message of the first day can
// land above one of the second (partitions and gateway clocks interleave). The sweep of the first day must
// not pass the second day's entry (hidden, on redis deleted, a day early): the trim stops below the
// lowest seq of a live bucket, and the first day stays in the ledger until the trim can cover its proof.
TEST_P(RetentionTest, TheTrimNeverPassesTheLowestSeqOfALiveBucket) {
  // Seq 13 carries a message stamped on the first day, after seq 12 of the second day.
  const auto late = make_record("d13", make_message(13, alice_, kStartMs + 60'000), {{bob_, alice_}});
  ASSERT_TRUE(is_ok(materialise(late, 13, seq_of(1, 12))));
  expire_first_day();
  auto swept = store().sweep_retention(bob_);
  ASSERT_TRUE(is_ok(swept));
  EXPECT_LT(swept->trim, seq_of(1, 12)) << "the trim passed an entry of a bucket that has not expired";
  EXPECT_EQ(swept->trim, seq_of(1, 11)) << "the trim still covers the expired entries below the live one";
  EXPECT_EQ(swept->buckets_expired, 0u) << "the first day's proof (seq 13) is not covered: it stays";
  auto page = store().read_mailbox(MailboxQuery{bob_, MailboxSeq{}, 10});
  ASSERT_TRUE(is_ok(page));
  std::vector<MailboxSeq> shown;
  for (const auto& e : page->entries) shown.push_back(e.seq);
  EXPECT_EQ(shown, (std::vector<MailboxSeq>{seq_of(1, 12), seq_of(1, 13)}))
      << "the second day's entry is still there";
  ASSERT_TRUE(is_ok(store().read_mailbox(MailboxQuery{bob_, seq_of(1, 11), 10})))
      << "a cursor at the trim is not expired";

  restart();
  auto again = store().sweep_retention(bob_);  // nothing more may go before the second day expires
  ASSERT_TRUE(is_ok(again));
  EXPECT_EQ(again->trim, seq_of(1, 11));
  EXPECT_EQ(seqs(bob_).size(), 2u);

  // Once the second day expires too, both go, and the trim covers every proof.
  clock_->set_ms((second_day().value + 1) * kDayMs + context_.retention_ms);
  auto both = store().sweep_retention(bob_);
  ASSERT_TRUE(is_ok(both));
  EXPECT_EQ(both->trim, seq_of(1, 13));
  EXPECT_EQ(both->buckets_expired, 2u);
  EXPECT_TRUE(seqs(bob_).empty());
}

// visibilities (docs/adr/0163) answers, for each user in order, what visibility answers: its shard's
// frontiers and its own trim (bob's moved by a sweep, alice's not), a user of the other shard with no
// frontier, a user named twice; one read of each shard's frontiers; an empty user refused.
TEST_P(RetentionTest, VisibilitiesAnswerEachUsersVisibility) {
  expire_first_day();
  ASSERT_TRUE(is_ok(store().sweep_retention(bob_)));
  const std::vector<UserId> users = {bob_, stranger_, alice_, bob_, carol_};
  const uint64_t reads_before = store().op_counts().reads;
  auto all = store().visibilities(users);
  const uint64_t reads = store().op_counts().reads - reads_before;
  ASSERT_TRUE(is_ok(all));
  ASSERT_EQ(all->size(), users.size());
  for (size_t i = 0; i < users.size(); ++i) {
    auto one = store().visibility(users[i]);
    ASSERT_TRUE(is_ok(one));
    EXPECT_EQ((*all)[i].frontiers, one->frontiers) << users[i].str();
    EXPECT_EQ((*all)[i].trim, one->trim) << users[i].str();
  }
  EXPECT_EQ((*all)[0].trim, seq_of(1, 11)) << "bob's trim, moved by the sweep";
  EXPECT_EQ((*all)[2].trim, MailboxSeq{});
  EXPECT_FALSE((*all)[0].frontiers.empty());
  EXPECT_TRUE((*all)[1].frontiers.empty()) << "the other shard never finished a record";
  // Two shards' frontiers and five ledgers: not two reads per user.
  EXPECT_LE(reads, 2u + users.size()) << "reads for " << users.size() << " users of two shards";
  EXPECT_TRUE(
      fails_with(store().visibilities(std::vector<UserId>{alice_, UserId{}}), Errc::kInvalidArgument));
  auto none = store().visibilities({});
  ASSERT_TRUE(is_ok(none));
  EXPECT_TRUE(none->empty());
}

INSTANTIATE_TEST_SUITE_P(Backends, RetentionTest, ::testing::ValuesIn(contract_backends()), fixture_name);

}  // namespace
}  // namespace qim::test
