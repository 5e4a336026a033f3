#include "node/mailbox_node.h"

#include <gtest/gtest.h>

#include <latch>
#include <mutex>
#include <thread>

#include "fanout/dispatch_plan.h"
#include "log/testing/temp_dir.h"
#include "log/testing/test_log.h"
#include "mailbox/message_codec.h"
#include "mailbox/store_options.h"
#include "node/testing_stores.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kShards = 4;
constexpr int64_t kServerTimeMs = 1'700'000'000'000;

class Recorder final : public DeliveryNotifier {
 public:
  void entries_visible(ShardId, MailboxSeq frontier, std::span<const MailboxEntry> entries) override {
    std::lock_guard lock(mu_);
    for (const auto& e : entries) {
      EXPECT_LE(e.seq, frontier);
      seen_.push_back(e);
    }
  }
  std::vector<MailboxEntry> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  std::mutex mu_;
  std::vector<MailboxEntry> seen_;
};

class NodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = testing::open_test_log(dir_.sub("mailbox-log"), kShards, "mailbox");
    StoreOptions so;
    so.backend = "memory";
    so.shard_count = kShards;
    // The store's clock stands at the messages' server time: on the wall clock their day buckets are long
    // past retention, and the node's retention sweep would (rightly) trim them.
    so.clock = std::make_shared<ManualClock>(kServerTimeMs);
    store_ = open_mailbox_store(so).value();
    // Two users of shard 0: every message between them is one record on partition 0.
    for (int i = 0; a_.empty() || b_.empty(); ++i) {
      UserId u = UserId::parse("user" + std::to_string(i)).value();
      if (shards_.shard_of(u).value != 0) continue;
      (a_.empty() ? a_ : b_) = u;
    }
  }

  // Appends the dispatch record of message number `n` (from a to b) to partition 0; returns its offset.
  Offset dispatch(int n) {
    OutboxRecord r;
    r.sender = a_;
    r.conversation = direct_conversation(a_, b_).value();
    r.client_msg_id = "c" + std::to_string(n);
    r.server_time_ms = kServerTimeMs;
    r.body = "message " + std::to_string(n);
    auto plan = plan_dispatches(r, 0, Offset{static_cast<uint64_t>(n)}, shards_, 256).value();
    EXPECT_EQ(plan.size(), 1u);
    return log_->append_sync(0, "", encode_dispatch_record(plan[0].record)).value();
  }

  NodeOptions options(Epoch epoch = Epoch{1}) {
    NodeOptions o;
    o.shards = {ShardId{0}};
    o.epoch = epoch;
    o.poll_wait = 10ms;
    o.retry_min = 1ms;
    o.retry_max = 10ms;
    return o;
  }

  // Every visible entry of a user, paging through the mailbox.
  std::vector<MailboxEntry> mailbox(const UserId& user) {
    std::vector<MailboxEntry> out;
    MailboxSeq after;
    while (true) {
      auto page = store_->read_mailbox(MailboxQuery{user, after, 1000});
      EXPECT_TRUE(page.ok()) << page.error().to_string();
      out.insert(out.end(), page->entries.begin(), page->entries.end());
      if (!page->more) return out;
      after = out.back().seq;
    }
  }
  MailboxSeq frontier() { return store_->lane_watermarks(ShardId{0}, Epoch{kMaxEpoch}).value()[0]; }

  // Checks that `user` sees messages 0..n-1 exactly once, in order, with strictly increasing seqs.
  void expect_all_once(const UserId& user, int n) {
    auto entries = mailbox(user);
    ASSERT_EQ(entries.size(), static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(entries[i].message.body, "message " + std::to_string(i));
      if (i > 0) {
        EXPECT_LT(entries[i - 1].seq, entries[i].seq);
      }
    }
  }

  testing::TempDir dir_;
  ShardMap shards_ = ShardMap::create(kShards).value();
  std::unique_ptr<EmbeddedLog> log_;
  std::unique_ptr<MailboxStore> store_;
  UserId a_, b_;
  Recorder recorder_;
};

TEST_F(NodeTest, MaterialisesEveryRecordAndReportsWhatBecameVisible) {
  MailboxNode node(*log_, *store_, &recorder_, options());
  ASSERT_TRUE(node.start().ok());
  for (int i = 0; i < 20; ++i) dispatch(i);
  ASSERT_TRUE(node.drain(60s).ok());
  expect_all_once(a_, 20);
  expect_all_once(b_, 20);
  EXPECT_EQ(frontier(), compose(Epoch{1}, Offset{19}).value());
  EXPECT_EQ(recorder_.seen().size(), 40u);
  const auto m = node.metrics()[0];
  EXPECT_EQ(m.records, 20u);
  EXPECT_EQ(m.advanced, 20u);
  EXPECT_EQ(m.lag, 0u);
  EXPECT_EQ(m.frontier, frontier());
  EXPECT_EQ(log_->committed(kMailboxGroup, 0)->value(), Offset{20});
}

TEST_F(NodeTest, CatchUpGoesRecordByRecordThenPages) {
  for (int i = 0; i < 10; ++i) dispatch(i);
  MailboxNode node(*log_, *store_, &recorder_, options());
  ASSERT_TRUE(node.start().ok());
  ASSERT_TRUE(node.drain(60s).ok());
  auto m = node.metrics()[0];
  EXPECT_EQ(m.catch_up, 10u);
  EXPECT_EQ(m.pages, 0u);
  expect_all_once(b_, 10);
}

// Holds the worker inside its first notification so the records appended meanwhile are already queued
// when it comes back: they must then be finished in full pages.
class GateOnFirst final : public DeliveryNotifier {
 public:
  void entries_visible(ShardId, MailboxSeq, std::span<const MailboxEntry>) override {
    if (first_) {
      first_ = false;
      entered.count_down();
      release.wait();
    }
  }
  std::latch entered{1};
  std::latch release{1};

 private:
  bool first_ = true;
};

TEST_F(NodeTest, RecordsQueuedBehindTheFirstAreFinishedAsPages) {
  testing::FlakyStore counting(*store_);
  GateOnFirst gate;
  MailboxNode node(*log_, counting, &gate, options());
  ASSERT_TRUE(node.start().ok());
  dispatch(0);
  gate.entered.wait();
  for (int i = 1; i <= 300; ++i) dispatch(i);
  gate.release.count_down();
  ASSERT_TRUE(node.drain(60s).ok());
  const auto m = node.metrics()[0];
  ASSERT_EQ(store_->finish_page_limit(), 64u);
  EXPECT_EQ(m.pages, 1u + 5u);  // the first alone, then 64+64+64+64+44
  EXPECT_EQ(m.paged_records, 301u);
  EXPECT_GT(m.mean_page(), 1.0);
  EXPECT_EQ(counting.page_calls.load(), 6);
  expect_all_once(b_, 301);
}

TEST_F(NodeTest, AFailedPageMovesNothingAndIsRetriedFromItsFirstRecord) {
  testing::FlakyStore flaky(*store_);
  flaky.fail_write_chunks = 2;
  flaky.fail_finish_page = 2;
  MailboxNode node(*log_, flaky, &recorder_, options());
  ASSERT_TRUE(node.start().ok());
  for (int i = 0; i < 50; ++i) dispatch(i);
  ASSERT_TRUE(node.drain(60s).ok());
  expect_all_once(a_, 50);
  EXPECT_GE(node.metrics()[0].retries, 4u);
  EXPECT_EQ(node.metrics()[0].advanced, 50u);
}

TEST_F(NodeTest, ARestartResumesAfterTheFrontierWithNothingLostOrDoubled) {
  {
    MailboxNode node(*log_, *store_, &recorder_, options());
    ASSERT_TRUE(node.start().ok());
    for (int i = 0; i < 30; ++i) dispatch(i);
    while (frontier().offset().value < 10) std::this_thread::sleep_for(1ms);
    node.stop();  // mid-stream
  }
  for (int i = 30; i < 60; ++i) dispatch(i);
  MailboxNode node(*log_, *store_, &recorder_, options());
  ASSERT_TRUE(node.start().ok());
  ASSERT_TRUE(node.drain(60s).ok());
  expect_all_once(a_, 60);
  expect_all_once(b_, 60);
  EXPECT_EQ(frontier(), compose(Epoch{1}, Offset{59}).value());
}

TEST_F(NodeTest, ARepeatedObservationReusesTheCanonicalSeqAndDoesNotAdvance) {
  dispatch(0);
  dispatch(1);
  // Fanout replays message 0: the same record again at a later offset.
  const std::string replay = log_->read(0, Offset{0}, 1, 0ms).value()[0].value;
  ASSERT_TRUE(log_->append_sync(0, "", replay).ok());
  dispatch(2);
  MailboxNode node(*log_, *store_, &recorder_, options());
  ASSERT_TRUE(node.start().ok());
  ASSERT_TRUE(node.drain(60s).ok());
  expect_all_once(b_, 3);
  const auto m = node.metrics()[0];
  EXPECT_EQ(m.repeated, 1u);
  EXPECT_EQ(m.advanced, 3u);
  EXPECT_EQ(mailbox(b_)[0].seq, compose(Epoch{1}, Offset{0}).value());
  EXPECT_EQ(frontier(), compose(Epoch{1}, Offset{3}).value());
}

TEST_F(NodeTest, SkipsAnUndecodableRecordAndGoesOn) {
  dispatch(0);
  ASSERT_TRUE(log_->append_sync(0, "", "garbage").ok());
  MailboxNode node(*log_, *store_, &recorder_, options());
  ASSERT_TRUE(node.start().ok());
  dispatch(1);
  ASSERT_TRUE(node.drain(60s).ok());
  expect_all_once(b_, 2);
  EXPECT_EQ(node.metrics()[0].skipped, 1u);
  EXPECT_EQ(frontier(), compose(Epoch{1}, Offset{2}).value());
}

TEST_F(NodeTest, ANewEpochContinuesTheShardAndAnOlderOneRefuses) {
  {
    MailboxNode node(*log_, *store_, &recorder_, options(Epoch{1}));
    ASSERT_TRUE(node.start().ok());
    for (int i = 0; i < 5; ++i) dispatch(i);
    ASSERT_TRUE(node.drain(60s).ok());
  }
  {
    MailboxNode node(*log_, *store_, &recorder_, options(Epoch{2}));
    ASSERT_TRUE(node.start().ok());
    for (int i = 5; i < 10; ++i) dispatch(i);
    ASSERT_TRUE(node.drain(60s).ok());
    EXPECT_EQ(node.metrics()[0].advanced, 5u);
  }
  expect_all_once(b_, 10);
  EXPECT_EQ(mailbox(b_)[5].seq, compose(Epoch{2}, Offset{5}).value());
  EXPECT_EQ(frontier(), compose(Epoch{2}, Offset{9}).value());

  MailboxNode stale(*log_, *store_, &recorder_, options(Epoch{1}));
  Status s = stale.start();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Errc::kEpochAhead);
}

TEST_F(NodeTest, RefusesBadOwnership) {
  auto o = options(Epoch{0});
  EXPECT_EQ(MailboxNode(*log_, *store_, nullptr, o).start().code(), Errc::kConfig);
  o = options();
  o.shards = {ShardId{kShards}};
  EXPECT_EQ(MailboxNode(*log_, *store_, nullptr, o).start().code(), Errc::kConfig);
}

TEST_F(NodeTest, AFrontierBeyondTheLogMeansTheyDoNotBelongTogether) {
  {
    MailboxNode node(*log_, *store_, nullptr, options());
    ASSERT_TRUE(node.start().ok());
    for (int i = 0; i < 3; ++i) dispatch(i);
    ASSERT_TRUE(node.drain(60s).ok());
  }
  log_.reset();
  log_ = testing::open_test_log(dir_.sub("fresh-log"), kShards, "mailbox");
  Status s = MailboxNode(*log_, *store_, nullptr, options()).start();
  EXPECT_EQ(s.code(), Errc::kInvariant);
}

TEST(ShardSetTest, ParsesRangesAndLists) {
  auto s = parse_shard_set("0-3,8,10-11", 16).value();
  std::vector<uint32_t> got;
  for (auto id : s) got.push_back(id.value);
  EXPECT_EQ(got, (std::vector<uint32_t>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_shard_set("3,3", 16)->size(), 1u);
  EXPECT_EQ(parse_shard_set("0-16", 16).code(), Errc::kInvalidArgument);
  EXPECT_EQ(parse_shard_set("5-2", 16).code(), Errc::kInvalidArgument);
  EXPECT_EQ(parse_shard_set("x", 16).code(), Errc::kInvalidArgument);
  EXPECT_EQ(parse_shard_set("", 16).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace qim
