// The client loop of docs/protocol.md "Delivery" (MailboxFeed), driven frame by frame in the orders a
// real connection can produce. The loop documented before issue 8 (apply pushes as they come, cursor =
// highest seq seen) loses an entry in each of these: a push during a multi-page SYNC moved the cursor
// past what the SYNC had not returned yet, and a push after a hole was taken as complete.
#include "client/mailbox_feed.h"

#include <gtest/gtest.h>

namespace qim::client {
namespace {

Entry entry(uint64_t seq) {
  Entry e;
  e.seq = seq;
  e.body = "m" + std::to_string(seq);
  return e;
}

ServerFrame deliver(uint64_t from, uint64_t frontier, std::vector<uint64_t> seqs) {
  ServerFrame f;
  f.type = "DELIVER";
  f.from = from;
  f.frontier = frontier;
  for (auto s : seqs) f.entries.push_back(entry(s));
  return f;
}

ServerFrame page(const std::string& ref, std::vector<uint64_t> seqs, uint64_t frontier, bool more) {
  ServerFrame f;
  f.type = "SYNC_PAGE";
  f.ref = ref;
  f.frontier = frontier;
  f.more = more;
  for (auto s : seqs) f.entries.push_back(entry(s));
  return f;
}

// Runs the feed and keeps what it shows and the SYNCs it asks for.
struct Harness {
  explicit Harness(MailboxFeed::Options o = {}) : feed(std::move(o)) {}
  void take(MailboxFeed::Actions a) {
    for (auto& e : a.show) shown.push_back(e.seq);
    if (a.send) sent.push_back(*a.send);
  }
  void start() { take(feed.start()); }
  void on(const ServerFrame& f) { take(feed.on_frame(f)); }
  // The `after` of the last SYNC asked for.
  std::string last_after() const {
    const auto& s = sent.back();
    auto at = s.find("\"after\":\"");
    return s.substr(at + 9, s.find('"', at + 9) - at - 9);
  }
  MailboxFeed feed;
  std::vector<uint64_t> shown;
  std::vector<std::string> sent;
};

TEST(MailboxFeedTest, APushDuringAMultiPageSyncIsBufferedAndNothingIsLost) {
  Harness h(MailboxFeed::Options{.cursor = 0, .sync_limit = 3});
  h.start();
  ASSERT_EQ(h.sent.size(), 1u);
  EXPECT_EQ(h.last_after(), "0");
  const std::string ref1 = h.feed.outstanding_ref();
  // The push of seq 9 overtakes the first page: it must not move the cursor past 4..8.
  h.on(deliver(8, 9, {9}));
  EXPECT_TRUE(h.shown.empty());
  h.on(page(ref1, {1, 2, 3}, 8, true));
  EXPECT_EQ(h.last_after(), "3");
  const std::string ref2 = h.feed.outstanding_ref();
  h.on(deliver(9, 11, {11}));
  h.on(page(ref2, {4, 5, 8}, 8, false));
  EXPECT_EQ(h.shown, (std::vector<uint64_t>{1, 2, 3, 4, 5, 8, 9, 11}));
  EXPECT_EQ(h.feed.cursor(), 11u);
  EXPECT_FALSE(h.feed.syncing());
  EXPECT_EQ(h.sent.size(), 2u);  // no SYNC beyond the first run
}

TEST(MailboxFeedTest, APushThatDoesNotContinueTriggersASyncFromTheCursor) {
  Harness h;
  h.start();
  h.on(page(h.feed.outstanding_ref(), {2}, 5, false));
  EXPECT_EQ(h.feed.cursor(), 5u);  // the page held everything up to its frontier
  h.on(deliver(5, 7, {7}));        // continues: shown
  h.on(deliver(9, 12, {12}));      // (7, 9] was never pushed: SYNC, and hold 12 back
  EXPECT_EQ(h.shown, (std::vector<uint64_t>{2, 7}));
  EXPECT_EQ(h.last_after(), "7");
  h.on(page(h.feed.outstanding_ref(), {8, 12}, 12, false));
  EXPECT_EQ(h.shown, (std::vector<uint64_t>{2, 7, 8, 12}));  // 12 once, though both carried it
  EXPECT_EQ(h.feed.gaps(), 1u);
  EXPECT_EQ(h.feed.sync_runs(), 2u);
}

// Issue 39 item 3: an entry the user deleted for themselves comes as a stub; the cursor moves past it and
// it is never shown.
TEST(MailboxFeedTest, ADeletedForMeStubMovesTheCursorAndIsNotShown) {
  Harness h;
  h.start();
  ServerFrame p = page(h.feed.outstanding_ref(), {1, 2, 3}, 3, false);
  p.entries[1].deleted_for_me = true;
  p.entries[1].body.clear();
  h.on(p);
  EXPECT_EQ(h.shown, (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(h.feed.cursor(), 3u);
}

TEST(MailboxFeedTest, SyncNeededSyncsAndOneDuringASyncRunsAnotherAfterIt) {
  Harness h;
  h.start();
  h.on(page(h.feed.outstanding_ref(), {}, 3, false));
  ServerFrame needed;
  needed.type = "SYNC_NEEDED";
  needed.reason = "test";
  h.on(needed);
  EXPECT_TRUE(h.feed.syncing());
  EXPECT_EQ(h.last_after(), "3");
  const std::string ref = h.feed.outstanding_ref();
  h.on(needed);  // during the SYNC: another one follows, since this one may have read too early
  h.on(page(ref, {4}, 4, false));
  EXPECT_TRUE(h.feed.syncing());
  EXPECT_EQ(h.last_after(), "4");
  h.on(page(h.feed.outstanding_ref(), {6}, 6, false));
  EXPECT_FALSE(h.feed.syncing());
  EXPECT_EQ(h.shown, (std::vector<uint64_t>{4, 6}));
}

TEST(MailboxFeedTest, AnExpiredCursorSyncsFromTheOldestRetainedWithoutShowingAgain) {
  Harness h(MailboxFeed::Options{.cursor = 10});
  h.start();
  ServerFrame expired;
  expired.type = "ERROR";
  expired.ref = h.feed.outstanding_ref();
  expired.code = "EXPIRED_CURSOR";
  h.on(expired);
  EXPECT_EQ(h.last_after(), "0");
  h.on(page(h.feed.outstanding_ref(), {9, 10, 11}, 11, false));
  EXPECT_EQ(h.shown, (std::vector<uint64_t>{11}));
}

TEST(MailboxFeedTest, PushModeShowsPushesWithoutSyncing) {
  Harness h(MailboxFeed::Options{.cursor = 0, .sync_allowed = false});
  h.start();
  h.on(deliver(0, 2, {2}));
  h.on(deliver(5, 6, {6}));
  EXPECT_TRUE(h.sent.empty());
  EXPECT_EQ(h.shown, (std::vector<uint64_t>{2, 6}));
}

}  // namespace
}  // namespace qim::client

namespace qim::client {
namespace {

// An entry of message `id` at `seq`.
Entry copy_of(uint64_t id, uint64_t seq) {
  Entry e;
  e.seq = seq;
  e.message_id = id;
  e.body = "message " + std::to_string(id);
  return e;
}
constexpr uint64_t kEpoch1 = uint64_t{1} << 48, kEpoch2 = uint64_t{2} << 48;

// Split brain: both owners finished messages 1..5 (at epoch 1 and epoch 2, the offsets alike), the new
// owner alone 6..8. A SYNC returns both copies, in seq order: each message is shown once, the first time.
TEST(MailboxFeedTest, AMessageStoredOncePerEpochIsShownOnce) {
  MailboxFeed feed(MailboxFeed::Options{.cursor = 0, .sync_limit = 4});
  std::vector<uint64_t> shown;
  auto take = [&](MailboxFeed::Actions a) {
    for (const auto& e : a.show) shown.push_back(e.message_id);
  };
  take(feed.start());
  std::vector<Entry> mailbox;
  for (uint64_t id = 1; id <= 5; ++id) mailbox.push_back(copy_of(id, kEpoch1 + id));
  for (uint64_t id = 1; id <= 8; ++id) mailbox.push_back(copy_of(id, kEpoch2 + id));
  // Pages of 4, as the server would cut them.
  for (size_t at = 0; at < mailbox.size(); at += 4) {
    ServerFrame p;
    p.type = "SYNC_PAGE";
    p.ref = feed.outstanding_ref();
    p.frontier = kEpoch2 + 8;
    p.more = at + 4 < mailbox.size();
    for (size_t i = at; i < std::min(mailbox.size(), at + 4); ++i) p.entries.push_back(mailbox[i]);
    take(feed.on_frame(p));
  }
  EXPECT_EQ(shown, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(feed.duplicates(), 5u);
  EXPECT_EQ(feed.cursor(), kEpoch2 + 8);  // the skipped copies are behind the cursor too
  EXPECT_FALSE(feed.syncing());
  // A push of a copy (the new owner's, live) is skipped the same way.
  ServerFrame d;
  d.type = "DELIVER";
  d.from = kEpoch2 + 8;
  d.frontier = kEpoch2 + 10;
  d.entries = {copy_of(3, kEpoch2 + 9), copy_of(9, kEpoch2 + 10)};
  take(feed.on_frame(d));
  EXPECT_EQ(shown.back(), 9u);
  EXPECT_EQ(shown.size(), 9u);
}

// The memory is bounded by the window: an id pushed out of it shows again. The ids kept with the cursor
// carry the window over a restart of the feed.
TEST(MailboxFeedTest, TheWindowIsBoundedAndSurvivesARestartWithTheCursor) {
  auto run = [](MailboxFeed& feed, std::vector<Entry> entries) {
    (void)feed.start();
    ServerFrame p;
    p.type = "SYNC_PAGE";
    p.ref = feed.outstanding_ref();
    p.frontier = entries.back().seq;
    p.entries = std::move(entries);
    std::vector<uint64_t> shown;
    for (const auto& e : feed.on_frame(p).show) shown.push_back(e.message_id);
    return shown;
  };
  MailboxFeed small(MailboxFeed::Options{.dedup_window = 2});
  EXPECT_EQ(run(small, {copy_of(1, 1), copy_of(2, 2), copy_of(3, 3), copy_of(3, 4), copy_of(1, 5)}),
            (std::vector<uint64_t>{1, 2, 3, 1}));  // 3 again is skipped; 1 left the window of 2
  EXPECT_EQ(small.recent_message_ids(), (std::vector<uint64_t>{3, 1}));

  MailboxFeed first(MailboxFeed::Options{});
  EXPECT_EQ(run(first, {copy_of(7, kEpoch1 + 1), copy_of(8, kEpoch1 + 2)}), (std::vector<uint64_t>{7, 8}));
  MailboxFeed restarted(
      MailboxFeed::Options{.cursor = first.cursor(), .recent_message_ids = first.recent_message_ids()});
  EXPECT_EQ(run(restarted, {copy_of(7, kEpoch2 + 1), copy_of(8, kEpoch2 + 2), copy_of(9, kEpoch2 + 3)}),
            (std::vector<uint64_t>{9}));
  MailboxFeed off(MailboxFeed::Options{.dedup_window = 0});
  EXPECT_EQ(run(off, {copy_of(7, 1), copy_of(7, 2)}), (std::vector<uint64_t>{7, 7}));
}

}  // namespace
}  // namespace qim::client
