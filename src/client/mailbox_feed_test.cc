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
