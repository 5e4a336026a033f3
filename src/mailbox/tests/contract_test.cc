// The MailboxStore contract suite, part 1: begin, entries and finish of one record, lane advances and
// pages. The fixture is in contract_fixture.h; the other parts are contract_epoch_test.cc (epochs,
// fencing, crashes and restarts), contract_retention_test.cc (reads, dispatch progress, GC and retention)
// and contract_bad_input_test.cc. ContractTest is instantiated over every backend here, once for all parts.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "mailbox/tests/contract_fixture.h"

namespace qim::test {
namespace {

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

// A reply's reference (docs/adr/0125) is kept by every backend, beside a plain message without one; a
// reply to message 0 (partition 0's first message) too.
TEST_P(ContractTest, AReplyKeepsItsReplyTo) {
  Message reply = make_message(2, alice_, clock_->now_ms());
  reply.reply_to = MessageId{0};
  const auto plain = to_bob("d1", 1);
  const auto r = make_record("d2", reply, {{bob_, alice_}});
  ASSERT_TRUE(is_ok(begin(plain, 10)));
  ASSERT_TRUE(is_ok(write(plain)));
  ASSERT_TRUE(is_ok(finish(plain, MailboxSeq{}, 10)));
  ASSERT_TRUE(is_ok(begin(r, 11)));
  ASSERT_TRUE(is_ok(write(r)));
  ASSERT_TRUE(is_ok(finish(r, seq_of(1, 10), 11)));
  const auto entries = mailbox(bob_);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_FALSE(entries[0].message.reply_to);
  EXPECT_EQ(entries[1].message, reply);
  EXPECT_EQ(entries[1].message.reply_to, MessageId{0});
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

INSTANTIATE_TEST_SUITE_P(Backends, ContractTest, ::testing::ValuesIn(contract_backends()), fixture_name);

}  // namespace
}  // namespace qim::test
