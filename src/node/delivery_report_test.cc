// What the shard worker reports to the delivery notifier: every move of the frontier, as a chain of ranges,
// with every entry the move made visible, also when the move happened inside a write that reported a
// failure (issue 8 item 2: such entries used to be dropped without a push, so an online client never saw
// them). Whatever the worker cannot attribute it reports as a range unknown, never as silence.
#include <gtest/gtest.h>

#include <latch>
#include <mutex>
#include <optional>
#include <tuple>

#include "core/clock.h"
#include "log/testing/temp_dir.h"
#include "log/testing/test_log.h"
#include "mailbox/message_codec.h"
#include "node/mailbox_node.h"
#include "node/node_test_support.h"
#include "node/quarantine.h"
#include "node/testing_stores.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kShards = 4;

// Records the reports of shard 0 and checks that they form one chain starting at `start`.
class ChainRecorder final : public DeliveryNotifier {
 public:
  void entries_visible(ShardId, MailboxSeq from, MailboxSeq to,
                       std::span<const MailboxEntry> entries) override {
    gate();
    std::lock_guard lock(mu_);
    link(from, to);
    for (const auto& e : entries) {
      EXPECT_GT(e.seq, from);
      EXPECT_LE(e.seq, to);
      pushed_.push_back(e);
    }
  }
  void range_unknown(ShardId, MailboxSeq from, MailboxSeq to) override {
    std::lock_guard lock(mu_);
    link(from, to);
    unknown_.emplace_back(from, to);
  }

  // With hold_first set, the first report waits until release() (so records pile up behind it).
  void hold_first() { hold_ = true; }
  void wait_held() { entered_.wait(); }
  void release() { release_.count_down(); }

  std::vector<MailboxEntry> pushed() {
    std::lock_guard lock(mu_);
    return pushed_;
  }
  std::vector<std::pair<MailboxSeq, MailboxSeq>> unknown() {
    std::lock_guard lock(mu_);
    return unknown_;
  }
  std::optional<MailboxSeq> last_to() {
    std::lock_guard lock(mu_);
    return last_to_;
  }
  bool signalled(MailboxSeq seq) {
    std::lock_guard lock(mu_);
    for (const auto& [from, to] : unknown_)
      if (seq > from && seq <= to) return true;
    return false;
  }

 private:
  void gate() {
    if (hold_ && !held_) {
      held_ = true;
      entered_.count_down();
      release_.wait();
    }
  }
  void link(MailboxSeq from, MailboxSeq to) {
    EXPECT_LT(from, to) << "a report must move the frontier";
    if (last_to_) {
      EXPECT_EQ(from, *last_to_) << "the chain of reports has a hole";
    } else {
      EXPECT_TRUE(from.is_zero()) << "the first report starts at the initial frontier";
    }
    last_to_ = to;
  }

  std::mutex mu_;
  std::vector<MailboxEntry> pushed_;
  std::vector<std::pair<MailboxSeq, MailboxSeq>> unknown_;
  std::optional<MailboxSeq> last_to_;
  bool hold_ = false;
  bool held_ = false;  // only the worker thread touches it
  std::latch entered_{1};
  std::latch release_{1};
};

class DeliveryReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = testing::open_test_log(dir_.sub("mailbox-log"), kShards, "mailbox");
    quarantine_log_ = testing::open_test_log(dir_.sub("quarantine-log"), kQuarantinePartitions, "quarantine");
    store_ = testing::open_memory_store(kShards);
    std::tie(a_, b_) = testing::two_users_of_shard_zero(shards_);
  }

  // Appends the dispatch record of message `n` (a to b: two entries on shard 0) to partition 0.
  void dispatch(int n) {
    // Sent now, within retention: the node's sweep runs on the system clock.
    const auto record = testing::message_record(shards_, a_, b_, n, SystemClock().now_ms());
    ASSERT_TRUE(log_->append_sync(0, "", encode_dispatch_record(record)).ok());
  }

  NodeOptions options() {
    NodeOptions o;
    o.shards = {ShardId{0}};
    o.epoch = Epoch{1};
    o.quarantine = quarantine_log_.get();
    o.poll_wait = 10ms;
    o.retry_min = 1ms;
    o.retry_max = 10ms;
    return o;
  }

  // Every visible entry of a user, read through a fresh query of the store (not the worker's view).
  std::vector<MailboxEntry> mailbox(const UserId& user) { return testing::read_whole_mailbox(*store_, user); }
  MailboxSeq frontier() { return testing::shard_zero_frontier(*store_); }

  // Every entry in the mailboxes of a and b was pushed exactly once or lies in a range signalled unknown;
  // the chain of reports ends at the stored frontier. Returns how many entries were pushed.
  size_t expect_every_entry_pushed_or_signalled(ChainRecorder& r, int messages) {
    EXPECT_EQ(r.last_to(), frontier());
    const auto pushed = r.pushed();
    size_t total = 0;
    for (const UserId& u : {a_, b_}) {
      const auto entries = mailbox(u);
      EXPECT_EQ(entries.size(), static_cast<size_t>(messages));
      for (const auto& e : entries) {
        const auto n = std::count(pushed.begin(), pushed.end(), e);
        EXPECT_TRUE(n == 1 || (n == 0 && r.signalled(e.seq)))
            << u.str() << " seq " << e.seq.to_string() << " pushed " << n << " times, not signalled";
        total += static_cast<size_t>(n);
      }
    }
    EXPECT_EQ(pushed.size(), total) << "pushed entries the mailbox does not hold";
    return total;
  }

  testing::TempDir dir_;
  ShardMap shards_ = ShardMap::create(kShards).value();
  std::unique_ptr<EmbeddedLog> log_;
  std::unique_ptr<EmbeddedLog> quarantine_log_;
  std::unique_ptr<MailboxStore> store_;
  UserId a_, b_;
};

// Catch-up goes record by record (finish_dispatch): two of those writes land and then report Timeout.
TEST_F(DeliveryReportTest, ARecordFinishThatLandsButTimesOutIsStillPushed) {
  for (int i = 0; i < 8; ++i) dispatch(i);
  testing::FlakyStore flaky(*store_);
  flaky.land_then_timeout_finish = 2;
  ChainRecorder recorder;
  MailboxNode node(*log_, flaky, &recorder, options());
  ASSERT_TRUE(node.start().ok());
  ASSERT_TRUE(node.drain(60s).ok());
  EXPECT_EQ(flaky.land_then_timeout_finish.load(), 0);
  EXPECT_EQ(frontier(), compose(Epoch{1}, Offset{7}).value());
  // The memory store can say which records advanced: everything is pushed, nothing left to a SYNC.
  EXPECT_EQ(expect_every_entry_pushed_or_signalled(recorder, 8), 16u);
  EXPECT_TRUE(recorder.unknown().empty());
}

// A page of queued records whose one frontier write lands but reports Timeout.
TEST_F(DeliveryReportTest, APageFinishThatLandsButTimesOutIsStillPushed) {
  testing::FlakyStore flaky(*store_);
  ChainRecorder recorder;
  recorder.hold_first();
  MailboxNode node(*log_, flaky, &recorder, options());
  ASSERT_TRUE(node.start().ok());
  dispatch(0);
  recorder.wait_held();
  for (int i = 1; i <= 100; ++i) dispatch(i);
  flaky.land_then_timeout_page = 2;
  recorder.release();
  ASSERT_TRUE(node.drain(60s).ok());
  EXPECT_EQ(flaky.land_then_timeout_page.load(), 0);
  EXPECT_GE(node.metrics()[0].retries, 2u);
  EXPECT_EQ(expect_every_entry_pushed_or_signalled(recorder, 101), 202u);
  EXPECT_TRUE(recorder.unknown().empty());
}

// When the store cannot say which records advanced, the move is reported as a range unknown.
TEST_F(DeliveryReportTest, AMoveTheWorkerCannotAttributeIsSignalledNotDropped) {
  for (int i = 0; i < 6; ++i) dispatch(i);
  testing::FlakyStore flaky(*store_);
  flaky.land_then_timeout_finish = 1;
  flaky.fail_dispatch_progress = 1000;
  ChainRecorder recorder;
  MailboxNode node(*log_, flaky, &recorder, options());
  ASSERT_TRUE(node.start().ok());
  ASSERT_TRUE(node.drain(60s).ok());
  EXPECT_EQ(expect_every_entry_pushed_or_signalled(recorder, 6), 10u);
  const std::vector<std::pair<MailboxSeq, MailboxSeq>> want{
      {MailboxSeq{}, compose(Epoch{1}, Offset{0}).value()}};
  EXPECT_EQ(recorder.unknown(), want);
}

}  // namespace
}  // namespace qim
