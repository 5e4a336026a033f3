// The MailboxStore contract suite, part 2: epochs, fencing of a stale owner, crashes and restarts
// (fixture in contract_fixture.h; instantiated over every backend in contract_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "mailbox/tests/contract_fixture.h"

namespace qim::test {
namespace {

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

}  // namespace
}  // namespace qim::test
