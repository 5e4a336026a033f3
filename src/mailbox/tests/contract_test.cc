// The MailboxStore contract suite (ADR-0022 acceptance list, less what is specific to CQL), run against
// every backend in contract_backends(). Each test gets a fresh store; "restart" simulates a process
// restart over the same stored data (the in-flight table is then empty).
#include <gtest/gtest.h>

#include <algorithm>

#include "mailbox/store_options.h"
#include "mailbox/tests/contract_helpers.h"

namespace qim::test {
namespace {

constexpr int64_t kStartMs = 20'000 * kDayMs + 3'600'000;  // 01:00 UTC of day 20000
constexpr Epoch kEpoch{1};
constexpr ShardId kShard{0};

// Skips the test when the backend under test has the given limit (see BackendLimits).
#define SKIP_IF_LIMITED(limit) \
  if (GetParam().limits.limit) GTEST_SKIP() << GetParam().name << ": " << *GetParam().limits.limit

// Skips a test of multi-record pages when the backend finishes fewer records per page (redis declares 1:
// ADR-0022 section 4, behaviour unchanged). Use after SetUp, where store() exists.
#define SKIP_UNLESS_PAGES_OF(n)                                                          \
  if (store().finish_page_limit() < (n))                                                 \
  GTEST_SKIP() << GetParam().name << " finishes at most " << store().finish_page_limit() \
               << " record(s) per page (ADR-0022 section 4)"

class ContractTest : public ::testing::TestWithParam<BackendFixture> {
 protected:
  void SetUp() override {
    if (auto why = GetParam().unavailable()) GTEST_SKIP() << *why;
    clock_ = std::make_shared<ManualClock>(kStartMs);
    context_.shards = *ShardMap::create(2);
    context_.clock = clock_;
    context_.retention_ms = 30 * kDayMs;
    alice_ = user_in_shard(context_.shards, kShard, 0);
    bob_ = user_in_shard(context_.shards, kShard, 1);
    carol_ = user_in_shard(context_.shards, kShard, 2);
    stranger_ = user_in_shard(context_.shards, ShardId{1}, 0);
    session_ = std::make_unique<StoreSession>(GetParam(), context_);
    ASSERT_TRUE(is_ok(session_->start()));
  }

  MailboxStore& store() { return session_->store(); }
  void restart() { ASSERT_TRUE(is_ok(session_->restart())); }

  // A one-to-one style record from alice, sent now, to the given recipient chunks.
  DispatchRecord record(std::string_view id, uint64_t message_id, std::vector<std::vector<UserId>> chunks) {
    return make_record(id, make_message(message_id, alice_, clock_->now_ms()), std::move(chunks));
  }
  DispatchRecord to_bob(std::string_view id, uint64_t message_id) {
    return record(id, message_id, {{bob_, alice_}});
  }

  Result<BeginOutcome> begin(const DispatchRecord& r, uint64_t observed, Epoch epoch = kEpoch) {
    return store().begin_dispatch(kShard, epoch, r.identity, Offset{observed});
  }
  Status write(const DispatchRecord& r, const std::vector<uint32_t>& chunks = {}, Epoch epoch = kEpoch) {
    return store().write_chunks(kShard, epoch, chunk_writes(r, chunks));
  }
  Result<FinishOutcome> finish(const DispatchRecord& r, MailboxSeq previous, uint64_t observed,
                               Epoch epoch = kEpoch) {
    return store().finish_dispatch(kShard, epoch, r.identity.id,
                                   uniform_advances(previous, *compose(epoch, Offset{observed})));
  }
  Result<FinishOutcome> materialise(const DispatchRecord& r, uint64_t observed, MailboxSeq previous,
                                    Epoch epoch = kEpoch) {
    return test::materialise(store(), kShard, epoch, r, Offset{observed}, previous);
  }
  MailboxSeq frontier(Epoch epoch = kEpoch) {
    auto f = frontier_of(store(), kShard, epoch);
    EXPECT_TRUE(is_ok(f));
    return f.ok() ? *f : MailboxSeq{};
  }
  std::vector<MailboxEntry> mailbox(const UserId& user, MailboxSeq after = {}) {
    auto entries = read_all(store(), user, after);
    EXPECT_TRUE(is_ok(entries));
    return entries.ok() ? *entries : std::vector<MailboxEntry>{};
  }
  std::vector<MailboxSeq> seqs(const UserId& user, MailboxSeq after = {}) {
    std::vector<MailboxSeq> out;
    for (const auto& e : mailbox(user, after)) out.push_back(e.seq);
    return out;
  }
  OpCounts ops() { return store().op_counts(); }

  std::shared_ptr<ManualClock> clock_;
  BackendContext context_;
  UserId alice_, bob_, carol_, stranger_;
  std::unique_ptr<StoreSession> session_;
};

// --- Begin, entries and finish of one record -------------------------------------------------------

TEST_P(ContractTest, FreshRecordBecomesVisibleOnlyWhenFinished) {
  const auto r = to_bob("d1", 1);
  auto begun = begin(r, 10);
  ASSERT_TRUE(is_ok(begun));
  EXPECT_EQ(begun->kind, BeginKind::kFresh);
  EXPECT_EQ(begun->canonical_offset, Offset{10});
  EXPECT_EQ(begun->seq, seq_of(1, 10));
  EXPECT_TRUE(begun->canonical);
  EXPECT_TRUE(begun->needs_entries);
  ASSERT_TRUE(is_ok(write(r)));
  EXPECT_TRUE(mailbox(bob_).empty()) << "entries are visible before the frontier covers them";

  auto done = finish(r, MailboxSeq{}, 10);
  ASSERT_TRUE(is_ok(done));
  EXPECT_TRUE(done->advanced);
  EXPECT_EQ(done->frontier, seq_of(1, 10));
  EXPECT_EQ(frontier(), seq_of(1, 10));
  const auto entries = mailbox(bob_);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].user, bob_);
  EXPECT_EQ(entries[0].seq, seq_of(1, 10));
  EXPECT_EQ(entries[0].message, r.message);
  EXPECT_EQ(seqs(alice_), std::vector{seq_of(1, 10)});
}

TEST_P(ContractTest, IncompleteManifestIsRefusedAndFrontierStays) {
  const auto r = record("d1", 1, {{bob_}, {carol_}, {alice_}});
  ASSERT_TRUE(is_ok(begin(r, 10)));
  EXPECT_TRUE(fails_with(finish(r, MailboxSeq{}, 10), Errc::kIncomplete)) << "no chunk written";
  ASSERT_TRUE(is_ok(write(r, {0, 2})));
  EXPECT_TRUE(fails_with(finish(r, MailboxSeq{}, 10), Errc::kIncomplete)) << "chunk 1 missing";
  EXPECT_EQ(frontier(), MailboxSeq{});
  EXPECT_TRUE(mailbox(bob_).empty());

  ASSERT_TRUE(is_ok(write(r, {1})));
  ASSERT_TRUE(is_ok(finish(r, MailboxSeq{}, 10)));
  EXPECT_EQ(frontier(), seq_of(1, 10));
  EXPECT_EQ(seqs(carol_), std::vector{seq_of(1, 10)});
}

TEST_P(ContractTest, RepeatedObservationReusesCanonicalAndWritesNothing) {
  const auto r = to_bob("d1", 1);
  ASSERT_TRUE(is_ok(materialise(r, 10, MailboxSeq{})));
  const OpCounts before = ops();

  auto again = begin(r, 15);  // fanout replayed the Outbox: the same record observed at 15
  ASSERT_TRUE(is_ok(again));
  EXPECT_EQ(again->kind, BeginKind::kExisting);
  EXPECT_EQ(again->canonical_offset, Offset{10});
  EXPECT_EQ(again->seq, seq_of(1, 10));
  EXPECT_FALSE(again->canonical);
  EXPECT_FALSE(again->needs_entries);
  auto done = finish(r, seq_of(1, 10), 15);
  ASSERT_TRUE(is_ok(done));
  EXPECT_FALSE(done->advanced) << "a repeated observation is a zero advance";
  EXPECT_EQ(done->frontier, seq_of(1, 10));

  const OpCounts delta = ops() - before;
  EXPECT_EQ(delta.inserts, 0u);
  EXPECT_EQ(delta.updates, 0u);
  EXPECT_EQ(delta.frontier_writes, 0u);
  EXPECT_EQ(frontier(), seq_of(1, 10));
  EXPECT_EQ(seqs(bob_), std::vector{seq_of(1, 10)});
}

TEST_P(ContractTest, ZeroAdvanceLeavesTheChainWhereItWas) {
  const auto a = to_bob("a", 1);
  const auto b = to_bob("b", 2);
  ASSERT_TRUE(is_ok(materialise(a, 10, MailboxSeq{})));
  ASSERT_TRUE(is_ok(materialise(a, 11, seq_of(1, 10))));  // zero advance: the frontier stays at 10
  ASSERT_TRUE(is_ok(begin(b, 12)));
  ASSERT_TRUE(is_ok(write(b)));
  EXPECT_TRUE(fails_with(finish(b, seq_of(1, 11), 12), Errc::kWatermarkGap))
      << "the next record chains from the frontier, not from the repeated observation";
  auto done = finish(b, seq_of(1, 10), 12);
  ASSERT_TRUE(is_ok(done));
  EXPECT_TRUE(done->advanced);
  EXPECT_EQ(frontier(), seq_of(1, 12));
}

TEST_P(ContractTest, RepeatedObservationInFlightNeedsNoEntries) {
  SKIP_UNLESS_PAGES_OF(2u);
  const auto r = to_bob("d1", 1);
  auto first = begin(r, 10);
  ASSERT_TRUE(is_ok(first));
  EXPECT_TRUE(first->needs_entries);
  auto second = begin(r, 11);  // queued behind its canonical observation in the same page
  ASSERT_TRUE(is_ok(second));
  EXPECT_FALSE(second->canonical);
  EXPECT_FALSE(second->needs_entries) << "the canonical observation earlier in the queue writes them";
  ASSERT_TRUE(is_ok(write(r)));
  const std::vector<PageItem> page = {{r.identity.id, uniform_advances(MailboxSeq{}, seq_of(1, 10))},
                                      {r.identity.id, uniform_advances(seq_of(1, 10), seq_of(1, 11))}};
  auto done = store().finish_dispatch_page(kShard, kEpoch, page);
  ASSERT_TRUE(is_ok(done));
  EXPECT_EQ(done->frontier, seq_of(1, 10));
  EXPECT_EQ(done->advanced_records, 1u);
  EXPECT_EQ(seqs(bob_), std::vector{seq_of(1, 10)});
}

TEST_P(ContractTest, SameIdWithAnotherDigestOrManifestConflicts) {
  const auto r = to_bob("d1", 1);
  ASSERT_TRUE(is_ok(materialise(r, 10, MailboxSeq{})));
  const OpCounts before = ops();

  auto other_digest = to_bob("d1", 2);  // another message under the same id
  ASSERT_NE(other_digest.identity.digest, r.identity.digest);
  EXPECT_TRUE(fails_with(begin(other_digest, 11), Errc::kDispatchConflict));
  DispatchIdentity other_manifest = r.identity;
  other_manifest.manifest.entry_counts = {1, 1};
  EXPECT_TRUE(fails_with(store().begin_dispatch(kShard, kEpoch, other_manifest, Offset{12}),
                         Errc::kDispatchConflict));
  EXPECT_EQ((ops() - before).inserts, 0u);

  auto same = begin(r, 13);
  ASSERT_TRUE(is_ok(same));
  EXPECT_EQ(same->canonical_offset, Offset{10}) << "the first observation still wins";
}

TEST_P(ContractTest, ConflictIsDetectedWhileInFlightToo) {
  const auto r = to_bob("d1", 1);
  ASSERT_TRUE(is_ok(begin(r, 10)));
  EXPECT_TRUE(fails_with(begin(to_bob("d1", 2), 11), Errc::kDispatchConflict));
}

// --- Lane advances ----------------------------------------------------------------------------------

TEST_P(ContractTest, NonUniformAdvancesAreRefused) {
  const auto r = to_bob("d1", 1);
  ASSERT_TRUE(is_ok(begin(r, 10)));
  ASSERT_TRUE(is_ok(write(r)));
  const OpCounts before = ops();
  auto finish_with = [&](const LaneAdvances& advances) {
    return store().finish_dispatch(kShard, kEpoch, r.identity.id, advances);
  };

  LaneAdvances prev_differs = uniform_advances(MailboxSeq{}, seq_of(1, 10));
  prev_differs[5].expected_previous = seq_of(1, 3);
  EXPECT_TRUE(fails_with(finish_with(prev_differs), Errc::kInvariant));
  LaneAdvances observed_differs = uniform_advances(MailboxSeq{}, seq_of(1, 10));
  observed_differs[63].observed = seq_of(1, 9);
  EXPECT_TRUE(fails_with(finish_with(observed_differs), Errc::kInvariant));
  const LaneAdvances single_lane = {LaneAdvance{Lane{7}, MailboxSeq{}, seq_of(1, 10)}};
  EXPECT_TRUE(fails_with(finish_with(single_lane), Errc::kInvariant));
  LaneAdvances missing_one = uniform_advances(MailboxSeq{}, seq_of(1, 10));
  missing_one.pop_back();
  EXPECT_TRUE(fails_with(finish_with(missing_one), Errc::kInvariant));
  EXPECT_TRUE(fails_with(finish_with({}), Errc::kInvariant));

  EXPECT_EQ((ops() - before).updates, 0u);
  EXPECT_EQ(frontier(), MailboxSeq{});
  EXPECT_TRUE(mailbox(bob_).empty());
  ASSERT_TRUE(is_ok(finish(r, MailboxSeq{}, 10)));  // the record is still in flight and finishes
}

TEST_P(ContractTest, UnknownOrRepeatedLaneIsInvalid) {
  const auto r = to_bob("d1", 1);
  ASSERT_TRUE(is_ok(begin(r, 10)));
  ASSERT_TRUE(is_ok(write(r)));
  LaneAdvances unknown = uniform_advances(MailboxSeq{}, seq_of(1, 10));
  unknown[3].lane = Lane{64};
  EXPECT_TRUE(
      fails_with(store().finish_dispatch(kShard, kEpoch, r.identity.id, unknown), Errc::kInvalidArgument));
  LaneAdvances repeated = uniform_advances(MailboxSeq{}, seq_of(1, 10));
  repeated[3].lane = Lane{4};
  EXPECT_TRUE(
      fails_with(store().finish_dispatch(kShard, kEpoch, r.identity.id, repeated), Errc::kInvalidArgument));
  EXPECT_EQ(frontier(), MailboxSeq{});
}

TEST_P(ContractTest, AdvanceMustMoveForwardWithinTheEpoch) {
  const auto a = to_bob("a", 1);
  ASSERT_TRUE(is_ok(materialise(a, 10, MailboxSeq{})));
  const auto b = to_bob("b", 2);
  ASSERT_TRUE(is_ok(begin(b, 12)));
  ASSERT_TRUE(is_ok(write(b)));
  EXPECT_TRUE(fails_with(finish(b, seq_of(1, 10), 10), Errc::kInvariant)) << "observed == previous";
  EXPECT_TRUE(fails_with(
      store().finish_dispatch(kShard, kEpoch, b.identity.id, uniform_advances(seq_of(1, 10), seq_of(2, 12))),
      Errc::kInvariant))
      << "observed at another epoch than the finishing owner's";
  EXPECT_EQ(frontier(), seq_of(1, 10));
}

TEST_P(ContractTest, LaneWatermarksAreSixtyFourEqualValues) {
  auto fresh = store().lane_watermarks(kShard, kEpoch);
  ASSERT_TRUE(is_ok(fresh));
  for (const auto& w : *fresh) EXPECT_EQ(w, MailboxSeq{});
  ASSERT_TRUE(is_ok(materialise(to_bob("d1", 1), 42, MailboxSeq{})));
  auto lanes = store().lane_watermarks(kShard, kEpoch);
  ASSERT_TRUE(is_ok(lanes));
  ASSERT_EQ(lanes->size(), 64u);
  for (const auto& w : *lanes) EXPECT_EQ(w, seq_of(1, 42));
  auto other = store().lane_watermarks(ShardId{1}, kEpoch);
  ASSERT_TRUE(is_ok(other));
  EXPECT_EQ((*other)[0], MailboxSeq{}) << "shards have their own frontier";
}

// --- Pages ------------------------------------------------------------------------------------------

TEST_P(ContractTest, ChainedPageFinishesWithOneFrontierWrite) {
  SKIP_UNLESS_PAGES_OF(5u);
  std::vector<DispatchRecord> records;
  std::vector<PageItem> page;
  MailboxSeq previous;
  for (uint64_t i = 0; i < 5; ++i) {
    records.push_back(record("d" + std::to_string(i), i, {{bob_, alice_}, {carol_}}));
  }
  for (uint64_t i = 0; i < 5; ++i) {
    ASSERT_TRUE(is_ok(begin(records[i], 100 + i)));
    ASSERT_TRUE(is_ok(write(records[i])));
    page.push_back(PageItem{records[i].identity.id, uniform_advances(previous, seq_of(1, 100 + i))});
    previous = seq_of(1, 100 + i);
  }
  const OpCounts before = ops();
  auto done = store().finish_dispatch_page(kShard, kEpoch, page);
  ASSERT_TRUE(is_ok(done));
  const OpCounts delta = ops() - before;
  EXPECT_EQ(done->frontier, seq_of(1, 104));
  EXPECT_EQ(done->advanced_records, 5u);
  EXPECT_EQ(done->frontier_writes, 1u);
  EXPECT_EQ(delta.frontier_writes, 1u);
  EXPECT_EQ(delta.updates, 1u) << "the page's only write is the frontier";
  EXPECT_EQ(delta.inserts, 0u);
  EXPECT_EQ(delta.pages, 1u);
  EXPECT_EQ(delta.paged_records, 5u);
  EXPECT_EQ(seqs(carol_).size(), 5u);
  EXPECT_EQ(frontier(), seq_of(1, 104));
}

TEST_P(ContractTest, PageWithARepeatedObservationInsideChainsPastIt) {
  SKIP_UNLESS_PAGES_OF(4u);
  const auto a = to_bob("a", 1);
  const auto b = to_bob("b", 2);
  const auto c = to_bob("c", 3);
  ASSERT_TRUE(is_ok(begin(a, 1)));
  ASSERT_TRUE(is_ok(begin(b, 2)));
  ASSERT_TRUE(is_ok(begin(a, 3)));  // a again, observed at 3
  ASSERT_TRUE(is_ok(begin(c, 4)));
  for (const auto* r : {&a, &b, &c}) ASSERT_TRUE(is_ok(write(*r)));
  const std::vector<PageItem> page = {{a.identity.id, uniform_advances(MailboxSeq{}, seq_of(1, 1))},
                                      {b.identity.id, uniform_advances(seq_of(1, 1), seq_of(1, 2))},
                                      {a.identity.id, uniform_advances(seq_of(1, 2), seq_of(1, 3))},
                                      {c.identity.id, uniform_advances(seq_of(1, 2), seq_of(1, 4))}};
  const OpCounts before = ops();
  auto done = store().finish_dispatch_page(kShard, kEpoch, page);
  ASSERT_TRUE(is_ok(done));
  EXPECT_EQ(done->frontier, seq_of(1, 4));
  EXPECT_EQ(done->advanced_records, 3u);
  EXPECT_EQ((ops() - before).frontier_writes, 1u);
  EXPECT_EQ(seqs(bob_), (std::vector{seq_of(1, 1), seq_of(1, 2), seq_of(1, 4)}));
}

TEST_P(ContractTest, BrokenChainFailsTheWholePage) {
  SKIP_UNLESS_PAGES_OF(3u);
  std::vector<DispatchRecord> records;
  for (uint64_t i = 0; i < 3; ++i) records.push_back(to_bob("d" + std::to_string(i), i));
  for (uint64_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(is_ok(begin(records[i], 10 + i)));
    ASSERT_TRUE(is_ok(write(records[i])));
  }
  std::vector<PageItem> page = {{records[0].identity.id, uniform_advances(MailboxSeq{}, seq_of(1, 10))},
                                {records[1].identity.id, uniform_advances(seq_of(1, 10), seq_of(1, 11))},
                                {records[2].identity.id, uniform_advances(seq_of(1, 10), seq_of(1, 12))}};
  const OpCounts before = ops();
  EXPECT_TRUE(fails_with(store().finish_dispatch_page(kShard, kEpoch, page), Errc::kWatermarkGap));
  EXPECT_EQ((ops() - before).updates, 0u);
  EXPECT_EQ(frontier(), MailboxSeq{});
  EXPECT_TRUE(mailbox(bob_).empty()) << "no entry of a failed page becomes visible";
  EXPECT_TRUE(mailbox(alice_).empty());

  page[2].advances = uniform_advances(seq_of(1, 11), seq_of(1, 12));  // the worker retries, chained
  auto done = store().finish_dispatch_page(kShard, kEpoch, page);
  ASSERT_TRUE(is_ok(done));
  EXPECT_EQ(done->frontier, seq_of(1, 12));
  EXPECT_EQ(seqs(bob_).size(), 3u);
}

TEST_P(ContractTest, PageFailsWhenAnyRecordIsIncomplete) {
  SKIP_UNLESS_PAGES_OF(2u);
  const auto a = to_bob("a", 1);
  const auto b = record("b", 2, {{bob_}, {alice_}});
  ASSERT_TRUE(is_ok(begin(a, 1)));
  ASSERT_TRUE(is_ok(begin(b, 2)));
  ASSERT_TRUE(is_ok(write(a)));
  ASSERT_TRUE(is_ok(write(b, {0})));
  const std::vector<PageItem> page = {{a.identity.id, uniform_advances(MailboxSeq{}, seq_of(1, 1))},
                                      {b.identity.id, uniform_advances(seq_of(1, 1), seq_of(1, 2))}};
  EXPECT_TRUE(fails_with(store().finish_dispatch_page(kShard, kEpoch, page), Errc::kIncomplete));
  EXPECT_EQ(frontier(), MailboxSeq{});
  EXPECT_TRUE(mailbox(bob_).empty());
}

TEST_P(ContractTest, PageLimitIsDeclaredAndOnlyLowered) {
  const uint32_t declared = store().finish_page_limit();
  EXPECT_GE(declared, 1u);
  ASSERT_TRUE(is_ok(session_->restart(4)));
  EXPECT_EQ(store().finish_page_limit(), std::min(declared, 4u));
  ASSERT_TRUE(is_ok(session_->restart(declared + 100)));
  EXPECT_EQ(store().finish_page_limit(), declared) << "QIM_MAILBOX_FINISH_PAGE_MAX never raises the limit";
}

// --- Epochs -----------------------------------------------------------------------------------------

TEST_P(ContractTest, HigherEpochFrontierIsRefused) {
  ASSERT_TRUE(is_ok(materialise(to_bob("d1", 1), 10, MailboxSeq{}, Epoch{3})));
  restart();  // e.g. a configuration rolled back to epoch 2
  const auto r = to_bob("d2", 2);
  EXPECT_TRUE(fails_with(begin(r, 11, Epoch{2}), Errc::kEpochAhead));
  EXPECT_TRUE(fails_with(finish(r, seq_of(3, 10), 11, Epoch{2}), Errc::kEpochAhead));
  EXPECT_TRUE(fails_with(store().lane_watermarks(kShard, Epoch{2}), Errc::kEpochAhead));
  EXPECT_EQ(frontier(Epoch{3}), seq_of(3, 10));
  EXPECT_TRUE(fails_with(begin(r, 12, Epoch{1}), Errc::kEpochAhead)) << "also from the live store's cache";
}

TEST_P(ContractTest, NewEpochContinuesTheShard) {
  const auto a = to_bob("a", 1);
  ASSERT_TRUE(is_ok(materialise(a, 500, MailboxSeq{}, Epoch{1})));
  restart();  // a new owner takes the shard at epoch 2

  auto replayed = begin(a, 501, Epoch{2});
  ASSERT_TRUE(is_ok(replayed));
  EXPECT_EQ(replayed->kind, BeginKind::kFresh) << "an identity of an older epoch is Fresh at a new one";
  EXPECT_EQ(replayed->seq, seq_of(2, 501));
  ASSERT_TRUE(is_ok(write(a, {}, Epoch{2})));
  auto done = finish(a, seq_of(1, 500), 501, Epoch{2});
  ASSERT_TRUE(is_ok(done));
  EXPECT_TRUE(done->advanced);
  EXPECT_EQ(frontier(Epoch{2}), seq_of(2, 501));
  EXPECT_EQ(seqs(bob_), (std::vector{seq_of(1, 500), seq_of(2, 501)}))
      << "the new owner materialised the replay again: clients de-duplicate by message id";
}

TEST_P(ContractTest, NewEpochEntriesSortAfterOldOnes) {
  ASSERT_TRUE(is_ok(materialise(to_bob("a", 1), 900, MailboxSeq{}, Epoch{1})));
  ASSERT_TRUE(is_ok(materialise(to_bob("b", 2), 901, seq_of(1, 900), Epoch{2})));
  ASSERT_TRUE(is_ok(materialise(to_bob("c", 3), 902, seq_of(2, 901), Epoch{2})));
  EXPECT_EQ(seqs(bob_), (std::vector{seq_of(1, 900), seq_of(2, 901), seq_of(2, 902)}));
  EXPECT_EQ(seqs(bob_, seq_of(1, 900)), (std::vector{seq_of(2, 901), seq_of(2, 902)}));
  EXPECT_EQ(frontier(Epoch{2}), seq_of(2, 902));
}

// An owner at epoch 1 finished a and b, then began and wrote c and d but never finished them (it died,
// or lost the shard). The owner at epoch 2 replays from the committed position: c and d again, then e.
// Epoch 1's entries are visible only up to epoch 1's own frontier, so c and d are shown once, at epoch 2.
TEST_P(ContractTest, EpochChangeHidesUnfinishedEntriesAndShowsEachMessageOnce) {
  const auto a = to_bob("a", 1);
  const auto b = to_bob("b", 2);
  const auto c = to_bob("c", 3);
  const auto d = to_bob("d", 4);
  const auto e = to_bob("e", 5);
  ASSERT_TRUE(is_ok(materialise(a, 10, MailboxSeq{}, Epoch{1})));
  ASSERT_TRUE(is_ok(materialise(b, 11, seq_of(1, 10), Epoch{1})));
  for (const auto* r : {&c, &d}) {
    auto begun = begin(*r, r == &c ? 12 : 13, Epoch{1});
    ASSERT_TRUE(is_ok(begun));
    ASSERT_TRUE(begun->needs_entries);
    ASSERT_TRUE(is_ok(write(*r, {}, Epoch{1})));
  }
  restart();  // the owner at epoch 2 takes the shard

  ASSERT_TRUE(is_ok(materialise(c, 12, seq_of(1, 11), Epoch{2})));
  ASSERT_TRUE(is_ok(materialise(d, 13, seq_of(2, 12), Epoch{2})));
  ASSERT_TRUE(is_ok(materialise(e, 14, seq_of(2, 13), Epoch{2})));
  restart();  // a fresh reader: no cache of either owner

  const std::vector<MailboxSeq> expected = {seq_of(1, 10), seq_of(1, 11), seq_of(2, 12), seq_of(2, 13),
                                            seq_of(2, 14)};
  EXPECT_EQ(seqs(bob_), expected) << "epoch 1's unfinished 1:12 and 1:13 must not be shown";
  EXPECT_EQ(seqs(alice_), expected);
  std::vector<uint64_t> ids;
  for (const auto& entry : mailbox(bob_)) ids.push_back(entry.message.id.value);
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2, 3, 4, 5})) << "every message exactly once";
  EXPECT_EQ(frontier(Epoch{2}), seq_of(2, 14));

  // Small pages across the epoch boundary: each entry once, in order, `more` exact.
  for (uint32_t limit = 1; limit <= 6; ++limit) {
    SCOPED_TRACE("limit " + std::to_string(limit));
    std::vector<MailboxSeq> paged;
    MailboxSeq after;
    for (int guard = 0; guard < 10; ++guard) {
      auto page = store().read_mailbox(MailboxQuery{bob_, after, limit});
      ASSERT_TRUE(is_ok(page));
      EXPECT_EQ(page->frontier, seq_of(2, 14));
      EXPECT_LE(page->entries.size(), limit);
      for (const auto& entry : page->entries) paged.push_back(entry.seq);
      EXPECT_EQ(page->more, paged.size() < expected.size());
      if (!page->more) break;
      ASSERT_FALSE(page->entries.empty());
      after = page->entries.back().seq;
    }
    EXPECT_EQ(paged, expected);
  }
  // A cursor inside epoch 1, even above its frontier, continues with epoch 2's entries.
  EXPECT_EQ(seqs(bob_, seq_of(1, 10)), std::vector(expected.begin() + 1, expected.end()));
  EXPECT_EQ(seqs(bob_, seq_of(1, 12)), std::vector(expected.begin() + 2, expected.end()));

  // A cursor in the current epoch skips the older epochs: one entries read, as before there were two.
  // (Redis reads entries with a Lua script, counted as a script.)
  auto reads_of = [&](MailboxSeq after) -> uint64_t {
    const OpCounts before = ops();
    EXPECT_TRUE(is_ok(store().read_mailbox(MailboxQuery{bob_, after, 100})));
    const OpCounts d = ops() - before;
    return d.reads + d.scripts;
  };
  const uint64_t current_reads = reads_of(seq_of(2, 12));
  EXPECT_EQ(reads_of(seq_of(1, 10)), current_reads + 1) << "one more entries read, for epoch 1 only";
}

// An owner at epoch 1 with a warm cache keeps finishing after the owner at epoch 2 wrote its frontier.
// Within the fence bound (here 1000 ms by the injected clock) it gets EpochAhead; then it writes nothing.
TEST_P(ContractTest, StaleOwnerIsFencedWithinTheTimeBound) {
  SKIP_IF_LIMITED(single_opener);
  auto stale = session_->open_another(FenceCheck{1000, 1'000'000});
  ASSERT_TRUE(is_ok(stale));
  auto owner = session_->open_another(FenceCheck{});
  ASSERT_TRUE(is_ok(owner));
  MailboxStore& old_owner = **stale;
  MailboxSeq w1;
  for (uint64_t i = 0; i < 3; ++i) {  // warm cache: the old owner last read the stored frontier now
    ASSERT_TRUE(is_ok(test::materialise(old_owner, kShard, Epoch{1}, to_bob("w" + std::to_string(i), i),
                                        Offset{10 + i}, w1)));
    w1 = seq_of(1, 10 + i);
  }
  const int64_t takeover_ms = clock_->now_ms();
  ASSERT_TRUE(is_ok(test::materialise(**owner, kShard, Epoch{2}, to_bob("n0", 100), Offset{13}, w1)));

  int finished_after_takeover = 0;
  std::optional<Error> fenced;
  for (uint64_t i = 0; i < 20 && !fenced; ++i) {
    clock_->advance_ms(100);
    auto done = test::materialise(old_owner, kShard, Epoch{1}, to_bob("s" + std::to_string(i), 200 + i),
                                  Offset{13 + i}, w1);
    if (done.ok()) {
      w1 = seq_of(1, 13 + i);
      ++finished_after_takeover;
    } else {
      ASSERT_EQ(done.code(), Errc::kEpochAhead) << done.error().to_string();
      fenced = done.error();
      EXPECT_LE(clock_->now_ms() - takeover_ms, 1000) << "fenced within the time bound";
    }
  }
  ASSERT_TRUE(fenced) << "the stale owner was never fenced";
  EXPECT_LE(finished_after_takeover, 9);
  EXPECT_NE(fenced->message().find("epoch 2"), std::string::npos) << fenced->message();
  EXPECT_NE(fenced->message().find("epoch 1"), std::string::npos) << fenced->message();
  EXPECT_NE(fenced->message().find("1000 ms"), std::string::npos) << fenced->message();

  // From now on it writes nothing: every step refuses before touching the store.
  const auto late = to_bob("late", 300);
  EXPECT_TRUE(
      fails_with(old_owner.begin_dispatch(kShard, Epoch{1}, late.identity, Offset{40}), Errc::kEpochAhead));
  EXPECT_TRUE(fails_with(
      old_owner.finish_dispatch(kShard, Epoch{1}, late.identity.id, uniform_advances(w1, seq_of(1, 40))),
      Errc::kEpochAhead));
  restart();  // a fresh reader
  EXPECT_EQ(frontier(Epoch{2}), seq_of(2, 13));
  std::vector<MailboxSeq> want;
  for (uint64_t i = 0; i < 3; ++i) want.push_back(seq_of(1, 10 + i));
  for (int i = 0; i < finished_after_takeover; ++i) want.push_back(seq_of(1, 13 + static_cast<uint64_t>(i)));
  want.push_back(seq_of(2, 13));
  std::sort(want.begin(), want.end());
  EXPECT_EQ(seqs(bob_), want);
}

// The same with the page bound: at most `every_pages` frontier writes between two checks.
TEST_P(ContractTest, StaleOwnerIsFencedWithinThePageBound) {
  SKIP_IF_LIMITED(single_opener);
  auto stale = session_->open_another(FenceCheck{3'600'000, 3});
  ASSERT_TRUE(is_ok(stale));
  auto owner = session_->open_another(FenceCheck{});
  ASSERT_TRUE(is_ok(owner));
  MailboxStore& old_owner = **stale;
  ASSERT_TRUE(
      is_ok(test::materialise(old_owner, kShard, Epoch{1}, to_bob("w", 1), Offset{10}, MailboxSeq{})));
  MailboxSeq w1 = seq_of(1, 10);
  ASSERT_TRUE(is_ok(test::materialise(**owner, kShard, Epoch{2}, to_bob("n0", 100), Offset{11}, w1)));
  int finished_after_takeover = 0;
  std::optional<Error> fenced;
  for (uint64_t i = 0; i < 10 && !fenced; ++i) {
    auto done = test::materialise(old_owner, kShard, Epoch{1}, to_bob("s" + std::to_string(i), 200 + i),
                                  Offset{11 + i}, w1);
    if (done.ok()) {
      w1 = seq_of(1, 11 + i);
      ++finished_after_takeover;
    } else {
      ASSERT_EQ(done.code(), Errc::kEpochAhead) << done.error().to_string();
      fenced = done.error();
    }
  }
  ASSERT_TRUE(fenced) << "the stale owner was never fenced";
  EXPECT_LE(finished_after_takeover, 2) << "3 pages since its last check, one of them before the takeover";
  EXPECT_NE(fenced->message().find("3 pages"), std::string::npos) << fenced->message();
  EXPECT_TRUE(fails_with(old_owner.lane_watermarks(kShard, Epoch{1}), Errc::kEpochAhead));
}

// --- Crashes and restarts ---------------------------------------------------------------------------

TEST_P(ContractTest, ReplayAfterCrashBeforeFrontierConverges) {
  const auto r = record("d1", 1, {{bob_, alice_}, {carol_}});
  ASSERT_TRUE(is_ok(begin(r, 10)));
  ASSERT_TRUE(is_ok(write(r)));
  restart();  // crashed between the entry writes and the frontier write
  EXPECT_EQ(frontier(), MailboxSeq{});
  EXPECT_TRUE(mailbox(bob_).empty());

  auto again = begin(r, 10);  // the log replays the record from the committed position
  ASSERT_TRUE(is_ok(again));
  EXPECT_EQ(again->kind, BeginKind::kExisting);
  EXPECT_EQ(again->canonical_offset, Offset{10});
  EXPECT_TRUE(again->canonical);
  EXPECT_TRUE(again->needs_entries) << "after a restart the in-flight table is empty: rewrite every entry";
  EXPECT_TRUE(fails_with(finish(r, MailboxSeq{}, 10), Errc::kIncomplete));
  ASSERT_TRUE(is_ok(write(r)));
  ASSERT_TRUE(is_ok(finish(r, MailboxSeq{}, 10)));
  EXPECT_EQ(seqs(bob_), std::vector{seq_of(1, 10)});
  EXPECT_EQ(seqs(carol_), std::vector{seq_of(1, 10)});
  EXPECT_EQ(mailbox(bob_)[0].message, r.message);
}

TEST_P(ContractTest, ReplayOfAPageAfterCrashConverges) {
  SKIP_UNLESS_PAGES_OF(3u);
  std::vector<DispatchRecord> records;
  for (uint64_t i = 0; i < 4; ++i) records.push_back(to_bob("d" + std::to_string(i), i));
  ASSERT_TRUE(is_ok(materialise(records[0], 10, MailboxSeq{})));
  ASSERT_TRUE(is_ok(begin(records[1], 11)));
  ASSERT_TRUE(is_ok(begin(records[2], 12)));
  ASSERT_TRUE(is_ok(write(records[1])));  // records[2] never got written, records[3] never begun
  restart();

  std::vector<PageItem> page;
  MailboxSeq previous = seq_of(1, 10);
  for (uint64_t i = 1; i < 4; ++i) {
    auto begun = begin(records[i], 10 + i);
    ASSERT_TRUE(is_ok(begun));
    EXPECT_EQ(begun->kind, i < 3 ? BeginKind::kExisting : BeginKind::kFresh);
    EXPECT_TRUE(begun->needs_entries);
    ASSERT_TRUE(is_ok(write(records[i])));
    page.push_back(PageItem{records[i].identity.id, uniform_advances(previous, seq_of(1, 10 + i))});
    previous = seq_of(1, 10 + i);
  }
  ASSERT_TRUE(is_ok(store().finish_dispatch_page(kShard, kEpoch, page)));
  EXPECT_EQ(seqs(bob_), (std::vector{seq_of(1, 10), seq_of(1, 11), seq_of(1, 12), seq_of(1, 13)}));
}

TEST_P(ContractTest, RestartKeepsEverythingFinished) {
  const auto a = record("a", 1, {{bob_, alice_}});
  const auto b = record("b", 2, {{carol_}, {bob_}});
  ASSERT_TRUE(is_ok(materialise(a, 10, MailboxSeq{})));
  ASSERT_TRUE(is_ok(materialise(b, 11, seq_of(1, 10))));
  const auto bob_before = mailbox(bob_);
  restart();

  EXPECT_EQ(frontier(), seq_of(1, 11));
  EXPECT_EQ(mailbox(bob_), bob_before);
  EXPECT_EQ(seqs(carol_), std::vector{seq_of(1, 11)});
  auto again = begin(b, 12);
  ASSERT_TRUE(is_ok(again));
  EXPECT_EQ(again->canonical_offset, Offset{11});
  EXPECT_FALSE(again->needs_entries) << "the frontier covers it";
  auto progress = store().dispatch_progress(kShard, kEpoch, a.identity.id);
  ASSERT_TRUE(is_ok(progress));
  EXPECT_EQ(progress->completed_chunks, std::vector<uint32_t>{0});
}

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

// --- Bad input: a clear error and nothing written ---------------------------------------------------

class BadInputTest : public ContractTest {
 protected:
  void SetUp() override {
    ContractTest::SetUp();
    if (IsSkipped()) return;
    before_ = ops();
  }
  void TearDown() override {
    if (IsSkipped() || !session_) return;
    const OpCounts delta = ops() - before_;
    EXPECT_EQ(delta.inserts, 0u) << "bad input wrote rows";
    EXPECT_EQ(delta.updates, 0u) << "bad input wrote rows";
    EXPECT_EQ(delta.lwts, 0u) << "bad input wrote rows";
  }
  OpCounts before_;
};

TEST_P(BadInputTest, BeginDispatch) {
  const auto r = to_bob("d1", 1);
  EXPECT_TRUE(fails_with(begin(r, kMaxOffset + 1), Errc::kInvalidArgument)) << "offset >= 2^48";
  EXPECT_TRUE(fails_with(begin(r, 10, Epoch{kMaxEpoch + 1}), Errc::kInvalidArgument)) << "epoch >= 2^16";
  EXPECT_TRUE(
      fails_with(store().begin_dispatch(ShardId{2}, kEpoch, r.identity, Offset{10}), Errc::kInvalidArgument))
      << "unknown shard";
  DispatchIdentity empty_manifest = r.identity;
  empty_manifest.manifest.entry_counts.clear();
  EXPECT_TRUE(
      fails_with(store().begin_dispatch(kShard, kEpoch, empty_manifest, Offset{10}), Errc::kInvalidArgument));
  DispatchIdentity empty_chunk = r.identity;
  empty_chunk.manifest.entry_counts = {2, 0};
  EXPECT_TRUE(
      fails_with(store().begin_dispatch(kShard, kEpoch, empty_chunk, Offset{10}), Errc::kInvalidArgument));
  DispatchIdentity no_id = r.identity;
  no_id.id = DispatchId{};
  EXPECT_TRUE(fails_with(store().begin_dispatch(kShard, kEpoch, no_id, Offset{10}), Errc::kInvalidArgument));
  EXPECT_TRUE(fails_with(store().dispatch_progress(kShard, kEpoch, r.identity.id), Errc::kNotFound))
      << "nothing was recorded";
}

TEST_P(BadInputTest, WriteChunks) {
  const auto r = record("d1", 1, {{bob_, alice_}, {carol_}});
  auto write_one = [&](ChunkWrite c, ShardId shard = kShard, Epoch epoch = kEpoch) {
    return store().write_chunks(shard, epoch, std::span(&c, 1));
  };
  const std::vector<UserId> one = {bob_};
  EXPECT_TRUE(fails_with(write_one({r.identity.id, 0, &r.message, r.chunks[0]}), Errc::kInvariant))
      << "not begun";
  ASSERT_TRUE(is_ok(begin(r, 10)));
  before_ = ops();
  EXPECT_TRUE(fails_with(write_one({r.identity.id, 2, &r.message, one}), Errc::kInvalidArgument))
      << "chunk index out of range";
  EXPECT_TRUE(fails_with(write_one({r.identity.id, 0, &r.message, one}), Errc::kInvalidArgument))
      << "wrong recipient count";
  const std::vector<UserId> foreign = {bob_, stranger_};
  EXPECT_TRUE(fails_with(write_one({r.identity.id, 0, &r.message, foreign}), Errc::kInvalidArgument))
      << "recipient of another shard";
  Message huge = r.message;
  huge.body.assign(kMaxBodyBytes + 1, 'x');
  EXPECT_TRUE(fails_with(write_one({r.identity.id, 0, &huge, r.chunks[0]}), Errc::kInvalidArgument))
      << "body too large";
  EXPECT_TRUE(fails_with(write_one({r.identity.id, 0, nullptr, r.chunks[0]}), Errc::kInvalidArgument))
      << "no message";
  EXPECT_TRUE(
      fails_with(write_one({r.identity.id, 0, &r.message, r.chunks[0]}, ShardId{2}), Errc::kInvalidArgument))
      << "unknown shard";
  EXPECT_TRUE(fails_with(write_one({r.identity.id, 0, &r.message, r.chunks[0]}, kShard, Epoch{kMaxEpoch + 1}),
                         Errc::kInvalidArgument));
  // One good chunk and one bad in the same call: neither is written.
  const std::vector<UserId> foreign_one = {stranger_};
  const std::vector<ChunkWrite> mixed = {{r.identity.id, 0, &r.message, r.chunks[0]},
                                         {r.identity.id, 1, &r.message, foreign_one}};
  EXPECT_TRUE(fails_with(store().write_chunks(kShard, kEpoch, mixed), Errc::kInvalidArgument));
  auto progress = store().dispatch_progress(kShard, kEpoch, r.identity.id);
  ASSERT_TRUE(is_ok(progress));
  EXPECT_TRUE(progress->completed_chunks.empty());
}

TEST_P(BadInputTest, FinishDispatchAndPages) {
  const auto r = to_bob("d1", 1);
  ASSERT_TRUE(is_ok(begin(r, 10)));
  ASSERT_TRUE(is_ok(write(r)));
  before_ = ops();
  const auto advances = uniform_advances(MailboxSeq{}, seq_of(1, 10));
  EXPECT_TRUE(fails_with(store().finish_dispatch(ShardId{2}, kEpoch, r.identity.id, advances),
                         Errc::kInvalidArgument));
  EXPECT_TRUE(fails_with(store().finish_dispatch(kShard, Epoch{kMaxEpoch + 1}, r.identity.id, advances),
                         Errc::kInvalidArgument));
  EXPECT_TRUE(fails_with(store().finish_dispatch(kShard, kEpoch, *DispatchId::parse("never-begun"), advances),
                         Errc::kInvariant));
  EXPECT_TRUE(fails_with(store().finish_dispatch_page(kShard, kEpoch, {}), Errc::kInvalidArgument))
      << "empty page";
  const std::vector<PageItem> too_long(store().finish_page_limit() + 1, PageItem{r.identity.id, advances});
  EXPECT_TRUE(fails_with(store().finish_dispatch_page(kShard, kEpoch, too_long), Errc::kInvalidArgument));
  const std::vector<PageItem> bad_shard = {{r.identity.id, advances}};
  EXPECT_TRUE(
      fails_with(store().finish_dispatch_page(ShardId{7}, kEpoch, bad_shard), Errc::kInvalidArgument));
  EXPECT_EQ(frontier(), MailboxSeq{});
}

TEST_P(BadInputTest, ReadsAndHousekeeping) {
  EXPECT_TRUE(fails_with(store().lane_watermarks(ShardId{2}, kEpoch), Errc::kInvalidArgument));
  EXPECT_TRUE(fails_with(store().lane_watermarks(kShard, Epoch{kMaxEpoch + 1}), Errc::kInvalidArgument));
  EXPECT_TRUE(
      fails_with(store().read_mailbox(MailboxQuery{UserId{}, MailboxSeq{}, 10}), Errc::kInvalidArgument));
  EXPECT_TRUE(fails_with(store().read_mailbox(MailboxQuery{bob_, MailboxSeq{}, 0}), Errc::kInvalidArgument));
  EXPECT_TRUE(
      fails_with(store().read_mailbox(MailboxQuery{bob_, MailboxSeq{}, 1001}), Errc::kInvalidArgument));
  const auto id = *DispatchId::parse("d1");
  EXPECT_TRUE(fails_with(store().dispatch_progress(ShardId{2}, kEpoch, id), Errc::kInvalidArgument));
  EXPECT_TRUE(
      fails_with(store().dispatch_progress(kShard, Epoch{kMaxEpoch + 1}, id), Errc::kInvalidArgument));
  EXPECT_TRUE(fails_with(store().sweep_retention(UserId{}), Errc::kInvalidArgument));
  EXPECT_TRUE(fails_with(store().list_retention_users(ShardId{2}, "", 10), Errc::kInvalidArgument));
  EXPECT_TRUE(fails_with(store().list_retention_users(kShard, "", 0), Errc::kInvalidArgument));
  EXPECT_TRUE(fails_with(store().list_retention_users(kShard, "", 1001), Errc::kInvalidArgument));
}

std::string fixture_name(const ::testing::TestParamInfo<BackendFixture>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Backends, ContractTest, ::testing::ValuesIn(contract_backends()), fixture_name);
INSTANTIATE_TEST_SUITE_P(Backends, RetentionTest, ::testing::ValuesIn(contract_backends()), fixture_name);
INSTANTIATE_TEST_SUITE_P(Backends, BadInputTest, ::testing::ValuesIn(contract_backends()), fixture_name);

}  // namespace
}  // namespace qim::test
