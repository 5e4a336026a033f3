// Hybrid delivery end to end, in one process (issue 8 item 2): mailbox log -> MailboxNode (over a store
// that injects faults) -> fan-in -> gateway -> WebSocket -> the client library's loop
// (client::MailboxFollower). An online client that never reconnects must be shown every entry of its
// mailbox exactly once, in order, whatever the delivery path lost on the way:
// - a frontier write that lands but reports Timeout (the worker rebuilds the push, or signals the range);
// - a fan-in over its queue bound (the dropped ranges reach the gateway as "range unknown");
// - a push that overtakes a multi-page SYNC.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <tuple>

#include "auth/token.h"
#include "client/mailbox_feed.h"
#include "delivery/fan_in_notifier.h"
#include "gateway/gateway.h"
#include "gateway/tests/gateway_harness.h"
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

constexpr const char* kSecret = "heal-secret";
constexpr uint32_t kShards = 4;
constexpr auto kWait = 20s;
constexpr auto kQuiet = 300ms;  // how long we wait to see that nothing more is shown

// Forwards to the gateway; while closed, the fan-in's delivery thread waits here (its queue fills up).
class Valve final : public DeliveryNotifier {
 public:
  explicit Valve(DeliveryNotifier& next) : next_(next) {}
  void entries_visible(ShardId s, MailboxSeq from, MailboxSeq to, std::span<const MailboxEntry> e) override {
    wait_open();
    next_.entries_visible(s, from, to, e);
  }
  void range_unknown(ShardId s, MailboxSeq from, MailboxSeq to) override {
    wait_open();
    next_.range_unknown(s, from, to);
  }
  void close() {
    std::lock_guard lock(mu_);
    open_ = false;
  }
  void open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  void wait_open() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return open_; });
  }
  DeliveryNotifier& next_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
};

// Holds the second mailbox read (a SYNC's second page) until released.
class SecondReadHold {
 public:
  void on_read() {
    std::unique_lock lock(mu_);
    if (++reads_ != 2) return;
    cv_.notify_all();
    cv_.wait(lock, [&] { return released_; });
  }
  void wait_held() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return reads_ >= 2; });
  }
  void release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int reads_ = 0;
  bool released_ = false;
};

class DeliveryHealTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = testing::open_test_log(dir_.sub("mailbox-log"), kShards, "mailbox");
    quarantine_log_ = testing::open_test_log(dir_.sub("quarantine-log"), kQuarantinePartitions, "quarantine");
    store_ = testing::open_memory_store(kShards, clock_);
    node_store_ = std::make_unique<testing::FlakyStore>(*store_);
    read_store_ = std::make_unique<testing::FlakyStore>(*store_);
    std::tie(alice_, bob_) = testing::two_users_of_shard_zero(shards_);
  }
  void TearDown() override {
    hold_.release();
    if (valve_) valve_->open();
    if (node_) node_->stop();
    fan_in_.reset();
    if (gateway_) gateway_->stop();
  }

  // Gateway and fan-in (with `bound` queued entries), wired as `qim up` wires them; then start_node().
  void start(size_t bound = 100'000) {
    const auto [o, d] = testing::gateway_setup(kSecret, outbox_, *read_store_, clock_, kShards);
    gateway_ = make_gateway(o, d);
    ASSERT_TRUE(gateway_->start().ok());
    valve_ = std::make_unique<Valve>(gateway_->notifier());
    fan_in_ = std::make_unique<FanInNotifier>(std::vector<DeliveryNotifier*>{valve_.get()}, bound);
  }
  // Records already in the log are its catch-up (finished one by one), later ones come in pages.
  void start_node() {
    NodeOptions no;
    no.shards = {ShardId{0}};
    no.epoch = Epoch{1};
    no.quarantine = quarantine_log_.get();
    no.poll_wait = 5ms;
    no.retry_min = 1ms;
    no.retry_max = 5ms;
    node_ = std::make_unique<MailboxNode>(*log_, *node_store_, fan_in_.get(), no);
    ASSERT_TRUE(node_->start().ok());
  }

  std::unique_ptr<client::Client> login(const UserId& user) {
    auto c = testing::connect_client(*gateway_, kWait);
    auto token = mint_token(kSecret, user, *DeviceId::parse("d"), 3'600'000, *clock_);
    EXPECT_TRUE(c->auth(*token).ok());
    return c;
  }

  // Message n, alice to bob: one dispatch record on shard 0 (two entries: alice's and bob's).
  void dispatch(int n) {
    const auto record = testing::message_record(shards_, alice_, bob_, n, clock_->now_ms());
    ASSERT_TRUE(log_->append_sync(0, "", encode_dispatch_record(record)).ok());
  }

  uint64_t advanced() { return total(node_->metrics()).advanced; }
  void wait_advanced(uint64_t n) {
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    while (advanced() < n && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
    ASSERT_GE(advanced(), n);
  }

  // Runs the follower until it has shown `n` entries (or `wait` passed); returns their bodies.
  std::vector<std::string> show(client::MailboxFollower& f, size_t n,
                                std::chrono::milliseconds wait = kWait) {
    std::vector<std::string> bodies;
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (bodies.size() < n && std::chrono::steady_clock::now() < deadline) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      auto shown = f.next(left);
      if (!shown.ok() && shown.error().code() == Errc::kTimeout) break;
      EXPECT_TRUE(shown.ok()) << shown.error().to_string();
      if (!shown.ok()) break;
      for (const auto& e : *shown) bodies.push_back(e.body);
    }
    return bodies;
  }

  static std::vector<std::string> bodies(int from, int to) {
    std::vector<std::string> out;
    for (int i = from; i < to; ++i) out.push_back("message " + std::to_string(i));
    return out;
  }

  // Handles frames until the follower's SYNC run is complete.
  void settle(client::MailboxFollower& f) {
    while (f.feed().syncing()) {
      auto r = f.next(kWait);
      ASSERT_TRUE(r.ok()) << r.error().to_string();
    }
  }

  // Ten messages wait in the log for the node's catch-up; the node starts and fifty more come in bursts
  // (so the worker finishes pages). The online bob shows each once, in order, on the same connection.
  void expect_every_message_shown_once(client::MailboxFollower& follower, client::Client& bob) {
    for (int i = 0; i < 10; ++i) dispatch(i);
    start_node();
    for (int i = 10; i < 60; ++i) {
      dispatch(i);
      if (i % 10 == 9) std::this_thread::sleep_for(2ms);
    }
    EXPECT_EQ(show(follower, 60), bodies(0, 60));
    EXPECT_TRUE(show(follower, 1, kQuiet).empty()) << "shown more than once";
    EXPECT_FALSE(bob.closed()) << "the client had to reconnect";
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(1'800'000'000'000);
  testing::TempDir dir_;
  ShardMap shards_ = ShardMap::create(kShards).value();
  std::unique_ptr<EmbeddedLog> log_;
  std::unique_ptr<EmbeddedLog> quarantine_log_;
  std::unique_ptr<MailboxStore> store_;
  std::unique_ptr<testing::FlakyStore> node_store_, read_store_;
  testing::FakeLog outbox_{2};
  std::unique_ptr<Gateway> gateway_;
  std::unique_ptr<Valve> valve_;
  std::unique_ptr<FanInNotifier> fan_in_;
  std::unique_ptr<MailboxNode> node_;
  UserId alice_, bob_;
  SecondReadHold hold_;
};

// The worker rebuilds what a landed-but-timed-out write made visible: pushed, no SYNC needed.
TEST_F(DeliveryHealTest, FrontierWritesThatLandButTimeOutEndWithEveryEntryShownOnce) {
  start();
  auto bob = login(bob_);
  client::MailboxFollower follower(*bob, {});
  follower.start();
  settle(follower);
  node_store_->land_then_timeout_finish = 3;
  node_store_->land_then_timeout_page = 3;
  expect_every_message_shown_once(follower, *bob);
  EXPECT_EQ(node_store_->land_then_timeout_finish.load() + node_store_->land_then_timeout_page.load(), 0)
      << "not every fault was injected";
  EXPECT_EQ(follower.feed().gaps(), 0u) << "everything could be pushed";
}

// The worker cannot attribute the move: the range reaches the gateway as unknown, bob SYNCs and heals.
TEST_F(DeliveryHealTest, AnUnattributableFrontierMoveEndsWithEveryEntryShownOnce) {
  start();
  auto bob = login(bob_);
  client::MailboxFollower follower(*bob, {});
  follower.start();
  node_store_->fail_dispatch_progress = 1'000'000;
  settle(follower);
  node_store_->land_then_timeout_finish = 2;
  node_store_->land_then_timeout_page = 2;
  expect_every_message_shown_once(follower, *bob);
  EXPECT_GE(follower.feed().gaps(), 1u) << "the SYNC_NEEDED path did not run";
}

// The fan-in's queue overflows while the gateway is held: the dropped ranges come out as one unknown
// range, bob gets SYNC_NEEDED and SYNCs.
TEST_F(DeliveryHealTest, AFanInOverflowEndsWithEveryEntryShownOnce) {
  start(/*bound=*/4);
  start_node();
  auto bob = login(bob_);
  client::MailboxFollower follower(*bob, {});
  follower.start();
  settle(follower);
  valve_->close();
  for (int i = 0; i < 40; ++i) dispatch(i);
  wait_advanced(40);
  valve_->open();
  EXPECT_EQ(show(follower, 40), bodies(0, 40));
  EXPECT_TRUE(show(follower, 1, kQuiet).empty()) << "shown more than once";
  EXPECT_GT(fan_in_->dropped_entries(), 0u) << "the queue never overflowed";
  EXPECT_GE(follower.feed().gaps(), 1u);
  EXPECT_FALSE(bob->closed());
}

// Bob's first SYNC runs over several pages; while its second page is held in the store, newer messages
// are pushed to him. The push must not move his cursor past the pages still to come.
TEST_F(DeliveryHealTest, APushRacingAMultiPageSyncLosesNothing) {
  start();
  start_node();
  for (int i = 0; i < 20; ++i) dispatch(i);
  wait_advanced(20);
  fan_in_->flush();
  read_store_->before_read = [this](const MailboxQuery&) { hold_.on_read(); };
  auto bob = login(bob_);
  client::MailboxFollower follower(*bob, client::MailboxFeed::Options{.cursor = 0, .sync_limit = 3});
  follower.start();
  auto first = follower.next(kWait);  // page 1: three entries; page 2 is asked for and held
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  EXPECT_EQ(first->size(), 3u);
  hold_.wait_held();
  for (int i = 20; i < 25; ++i) dispatch(i);
  wait_advanced(25);
  fan_in_->flush();
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (bob->queued() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  ASSERT_GT(bob->queued(), 0u) << "the push did not arrive during the SYNC";
  hold_.release();
  std::vector<std::string> got;
  for (const auto& e : *first) got.push_back(e.body);
  for (auto& b : show(follower, 22)) got.push_back(std::move(b));
  EXPECT_EQ(got, bodies(0, 25));
  EXPECT_TRUE(show(follower, 1, kQuiet).empty()) << "shown more than once";
}

}  // namespace
}  // namespace qim
