#include "node/mailbox_node.h"

#include <gtest/gtest.h>

#include <spdlog/sinks/null_sink.h>

#include <atomic>
#include <latch>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include <spdlog/sinks/ringbuffer_sink.h>

#include "fanout/dispatch_plan.h"
#include "lifecycle/message_state.h"
#include "log/testing/temp_dir.h"
#include "log/testing/test_log.h"
#include "mailbox/contract_store.h"
#include "mailbox/message_codec.h"
#include "mailbox/store_options.h"
#include "mailbox/tests/backend_fixture.h"
#include "node/node_test_support.h"
#include "node/page.h"
#include "node/quarantine.h"
#include "node/testing_stores.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kShards = 4;
constexpr int64_t kServerTimeMs = 1'700'000'000'000;

class Recorder final : public DeliveryNotifier {
 public:
  void entries_visible(ShardId, MailboxSeq, MailboxSeq frontier,
                       std::span<const MailboxEntry> entries) override {
    std::lock_guard lock(mu_);
    for (const auto& e : entries) {
      EXPECT_LE(e.seq, frontier);
      seen_.push_back(e);
    }
  }
  void range_unknown(ShardId, MailboxSeq, MailboxSeq) override {}  // delivery_report_test.cc checks these
  std::vector<MailboxEntry> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  std::mutex mu_;
  std::vector<MailboxEntry> seen_;
};

// A log decorator whose appends fail while `fail` is set: a quarantine that cannot take a record.
class FailingLog final : public Log {
 public:
  explicit FailingLog(Log& inner) : inner_(inner) {}
  std::atomic<bool> fail{false};
  std::atomic<int> refused{0};

  const std::string& name() const override { return inner_.name(); }
  uint32_t partition_count() const override { return inner_.partition_count(); }
  void append(uint32_t partition, std::string key, std::string value, AppendCallback done) override {
    if (fail) {
      refused++;
      done(Error(Errc::kIo, "injected: quarantine disk full"));
      return;
    }
    inner_.append(partition, std::move(key), std::move(value), std::move(done));
  }
  Result<std::vector<LogRecord>> read(uint32_t partition, Offset from, size_t max,
                                      std::chrono::milliseconds wait) override {
    return inner_.read(partition, from, max, wait);
  }
  Result<Offset> end_offset(uint32_t partition) override { return inner_.end_offset(partition); }
  Status commit(const std::string& group, uint32_t partition, Offset next) override {
    return inner_.commit(group, partition, next);
  }
  Result<std::optional<Offset>> committed(const std::string& group, uint32_t partition) override {
    return inner_.committed(group, partition);
  }

 private:
  Log& inner_;
};

class NodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = testing::open_test_log(dir_.sub("mailbox-log"), kShards, "mailbox");
    quarantine_log_ = testing::open_test_log(dir_.sub("quarantine-log"), kQuarantinePartitions, "quarantine");
    // The store's clock stands at the messages' server time: on the wall clock their day buckets are long
    // past retention, and the node's retention sweep would (rightly) trim them.
    store_ = testing::open_memory_store(kShards, std::make_shared<ManualClock>(kServerTimeMs));
    std::tie(a_, b_) = testing::two_users_of_shard_zero(shards_);
  }

  // The dispatch record of message number `n` (from a to b) on partition 0.
  DispatchRecord record(int n) { return testing::message_record(shards_, a_, b_, n, kServerTimeMs); }
  // The record of message `n` with another body under the same dispatch id: a DispatchConflict.
  DispatchRecord conflicting(int n) {
    DispatchRecord r = record(n);
    r.message.body = "tampered " + std::to_string(n);
    r.identity = make_identity(r.identity.id, r.message, r.chunks);
    return r;
  }
  // Appends the dispatch record of message number `n` to partition 0; returns its offset.
  Offset dispatch(int n) { return log_->append_sync(0, "", encode_dispatch_record(record(n))).value(); }
  // Appends the record fanout appends for a recall of message number `n` (Outbox offset n), read at
  // Outbox offset `at`: its entry, client id "~recall", to a and b.
  Offset dispatch_recall(int n, uint64_t at) {
    MessageState target;
    target.id = message_id_of(0, Offset{static_cast<uint64_t>(n)});
    return dispatch_event(target, MessageEventKind::kRecall, "", at);
  }
  // Appends the record fanout appends for the applied event `kind` of `state`'s message (an edit to
  // `text`), read at Outbox offset `at`, with `state` as it stands after it: its entry to a and b.
  Offset dispatch_event(MessageState& state, MessageEventKind kind, std::string_view text, uint64_t at) {
    state.events[at] =
        EventOutcome{kind, true, EventRefusal::kNone, a_, kServerTimeMs + static_cast<int64_t>(at), ""};
    OutboxRecord r;
    r.sender = a_;
    r.conversation = direct_conversation(a_, b_).value();
    r.client_msg_id = event_entry_client_id(kind);
    r.server_time_ms = kServerTimeMs;
    r.body = event_entry_body(state, kind, a_, text, at);
    auto plan = plan_dispatches(r, 0, Offset{at}, shards_, 256).value();
    return log_->append_sync(0, "", encode_dispatch_record(plan.at(0).record)).value();
  }

  NodeOptions options(Epoch epoch = Epoch{1}) {
    NodeOptions o;
    o.shards = {ShardId{0}};
    o.epoch = epoch;
    o.poll_wait = 10ms;
    o.retry_min = 1ms;
    o.retry_max = 10ms;
    o.quarantine = quarantine_log_.get();
    return o;
  }
  // What the quarantine holds, read back from its log.
  std::vector<QuarantineEntry> quarantined() {
    return read_quarantine(*quarantine_log_, Offset{0}, 100).value();
  }

  // Every visible entry of a user, paging through the mailbox.
  std::vector<MailboxEntry> mailbox(const UserId& user) { return testing::read_whole_mailbox(*store_, user); }
  MailboxSeq frontier() { return testing::shard_zero_frontier(*store_); }

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
  std::unique_ptr<EmbeddedLog> quarantine_log_;
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
  void range_unknown(ShardId, MailboxSeq, MailboxSeq) override {}
  void entries_visible(ShardId, MailboxSeq, MailboxSeq, std::span<const MailboxEntry>) override {
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
  EXPECT_EQ(store_->inflight_records(), 0u);  // failed writes and pages left nothing in the table
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

TEST_F(NodeTest, QuarantinesAnUndecodableOrConflictingRecordAndGoesOn) {
  dispatch(0);
  ASSERT_TRUE(log_->append_sync(0, "", "garbage").ok());
  ASSERT_TRUE(log_->append_sync(0, "", encode_dispatch_record(conflicting(0))).ok());
  MailboxNode node(*log_, *store_, &recorder_, options());
  ASSERT_TRUE(node.start().ok());
  dispatch(1);
  ASSERT_TRUE(node.drain(60s).ok());
  expect_all_once(b_, 2);
  const auto m = node.metrics()[0];
  EXPECT_EQ(m.skipped, 2u);
  EXPECT_EQ(m.quarantined, (std::map<std::string, uint64_t>{{"CorruptEntry", 1}, {"DispatchConflict", 1}}));
  EXPECT_EQ(frontier(), compose(Epoch{1}, Offset{3}).value());
  auto q = quarantined();
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].record.offset, Offset{1});
  EXPECT_EQ(q[0].record.code, Errc::kCorruptEntry);
  EXPECT_EQ(q[0].record.raw, "garbage");
  EXPECT_EQ(q[1].record.offset, Offset{2});
  EXPECT_EQ(q[1].record.code, Errc::kDispatchConflict);
  EXPECT_NE(q[1].record.message.find("another digest"), std::string::npos) << q[1].record.message;
  EXPECT_EQ(q[1].record.raw, encode_dispatch_record(conflicting(0)));
  EXPECT_EQ(store_->inflight_records(), 0u);
}

// A record whose entries the store refuses (a recipient of another shard): begun, then abandoned and
// quarantined; the table keeps nothing of it.
TEST_F(NodeTest, ARecordWhoseEntriesAreRefusedIsQuarantinedAndLeavesNothingInFlight) {
  UserId stranger;
  for (int i = 0; stranger.empty(); ++i) {
    UserId u = UserId::parse("user" + std::to_string(i)).value();
    if (shards_.shard_of(u).value != 0) stranger = u;
  }
  DispatchRecord bad = record(1);
  bad.chunks = {{stranger}};
  bad.identity = make_identity(bad.identity.id, bad.message, bad.chunks);
  dispatch(0);
  ASSERT_TRUE(log_->append_sync(0, "", encode_dispatch_record(bad)).ok());
  MailboxNode node(*log_, *store_, &recorder_, options());
  ASSERT_TRUE(node.start().ok());
  ASSERT_TRUE(node.drain(60s).ok());
  EXPECT_EQ(store_->inflight_records(), 0u);
  auto q = quarantined();
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].record.code, Errc::kInvalidArgument);
  EXPECT_NE(q[0].record.message.find("entries are refused"), std::string::npos) << q[0].record.message;
  EXPECT_EQ(node.metrics()[0].quarantined.at("InvalidArgument"), 1u);
  expect_all_once(b_, 1);
}

// A page holding good records, a conflicting and a corrupt one: the good ones become visible (read back
// through a fresh store), the bad ones are in the quarantine with their reasons before the frontier
// passes them.
TEST_F(NodeTest, APageWithRefusedRecordsQuarantinesThemAndFinishesTheRest) {
  StoreOptions so;
  so.backend = "embedded";
  so.data_dir = dir_.sub("embedded-store");
  so.shard_count = kShards;
  auto store = open_mailbox_store(so).value();
  std::vector<std::string> raws = {encode_dispatch_record(record(0)), encode_dispatch_record(record(1)),
                                   encode_dispatch_record(conflicting(1)), "\x01corrupt",
                                   encode_dispatch_record(record(2))};
  std::vector<QueuedRecord> page;
  for (size_t i = 0; i < raws.size(); ++i) {
    page.push_back(QueuedRecord{Offset{10 + i}, decode_dispatch_record(raws[i]), raws[i]});
  }
  auto clock = std::make_shared<ManualClock>(1'800'000'000'000);
  Quarantine quarantine(*quarantine_log_, clock);
  spdlog::logger logger("page", std::make_shared<spdlog::sinks::null_sink_mt>());
  const MailboxSeq w = compose(Epoch{1}, Offset{9}).value();  // a non-zero frontier to build on
  // Move the frontier to w first with a record of its own at offset 9.
  {
    auto r = record(99);
    auto b = store->begin_dispatch(ShardId{0}, Epoch{1}, r.identity, Offset{9}).value();
    std::vector<ChunkWrite> cw = {ChunkWrite{r.identity.id, 0, &r.message, r.chunks[0]}};
    ASSERT_TRUE(store->write_chunks(ShardId{0}, Epoch{1}, cw).ok());
    ASSERT_TRUE(
        store->finish_dispatch(ShardId{0}, Epoch{1}, r.identity.id, uniform_advances(MailboxSeq{}, b.seq))
            .ok());
  }
  auto result = materialize_page(*store, quarantine, ShardId{0}, Epoch{1}, w, page, true, logger);
  ASSERT_TRUE(result.ok()) << result.error().to_string();
  EXPECT_EQ(result->skipped, 2u);
  EXPECT_EQ(result->quarantined, (std::vector<Errc>{Errc::kDispatchConflict, Errc::kCorruptEntry}));
  EXPECT_EQ(result->frontier, compose(Epoch{1}, Offset{14}).value());
  EXPECT_EQ(store->inflight_records(), 0u);
  store.reset();

  auto fresh = open_mailbox_store(so).value();
  auto entries =
      fresh->read_mailbox(MailboxQuery{b_, compose(Epoch{1}, Offset{9}).value(), 100}).value().entries;
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].message.body, "message 0");
  EXPECT_EQ(entries[1].message.body, "message 1");
  EXPECT_EQ(entries[2].message.body, "message 2");
  EXPECT_EQ(entries[2].seq, compose(Epoch{1}, Offset{14}).value());

  auto q = quarantined();
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].record.offset, Offset{12});
  EXPECT_EQ(q[0].record.code, Errc::kDispatchConflict);
  EXPECT_EQ(q[0].record.raw, raws[2]);
  EXPECT_EQ(q[0].record.time_ms, clock->now_ms());
  EXPECT_EQ(q[1].record.offset, Offset{13});
  EXPECT_EQ(q[1].record.code, Errc::kCorruptEntry);
  EXPECT_EQ(q[1].record.raw, raws[3]);
  EXPECT_EQ(q[1].record.raw_size, raws[3].size());
}

TEST_F(NodeTest, AFailingQuarantineKeepsTheFrontierBeforeTheRefusedRecord) {
  FailingLog failing(*quarantine_log_);
  failing.fail = true;
  dispatch(0);
  ASSERT_TRUE(log_->append_sync(0, "", "garbage").ok());
  dispatch(1);
  auto o = options();
  o.quarantine = &failing;
  MailboxNode node(*log_, *store_, &recorder_, o);
  ASSERT_TRUE(node.start().ok());
  // Wait until the worker has tried (and failed) to quarantine the record a few times.
  while (failing.refused < 3) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(frontier(), compose(Epoch{1}, Offset{0}).value());  // not past the refused record
  EXPECT_EQ(node.metrics()[0].skipped, 0u);
  EXPECT_TRUE(quarantined().empty());
  EXPECT_EQ(node.fatal(), std::nullopt);
  failing.fail = false;  // the quarantine recovers: the shard goes on
  ASSERT_TRUE(node.drain(60s).ok());
  expect_all_once(b_, 2);
  EXPECT_EQ(frontier(), compose(Epoch{1}, Offset{2}).value());
  auto q = quarantined();
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].record.offset, Offset{1});
  EXPECT_EQ(node.metrics()[0].quarantined.at("CorruptEntry"), 1u);
}

TEST_F(NodeTest, NoQuarantineLogIsAConfigError) {
  auto o = options();
  o.quarantine = nullptr;
  EXPECT_EQ(MailboxNode(*log_, *store_, nullptr, o).start().code(), Errc::kConfig);
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

// Polls `done` (a condition, not a duration) until it holds or a minute has passed.
template <typename F>
bool eventually(F done) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// An owner at epoch 1 keeps running while another takes the shard at epoch 2 (two stores over the same
// data, each with its own frontier cache). Within the fence bound the stale worker stops the shard: a
// critical log line and its metrics name the shard, both epochs and the bound.
TEST_F(NodeTest, AStaleOwnerIsFencedAndItsShardStopsSayingWhy) {
  auto clock = std::make_shared<ManualClock>(1'700'000'000'000);
  BackendContext context;
  context.shards = shards_;
  context.clock = clock;
  auto harness = test::memory_fixture().make_harness();
  ASSERT_TRUE(harness.ok());
  auto stale_backend = (*harness)->open(context);
  auto owner_backend = (*harness)->open(context);
  ASSERT_TRUE(stale_backend.ok() && owner_backend.ok());
  ContractStore stale_store(std::move(*stale_backend), context, std::nullopt, FenceCheck{1000, 1'000'000});
  ContractStore owner_store(std::move(*owner_backend), context, std::nullopt);

  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(256);
  NodeOptions stale_options = options(Epoch{1});
  stale_options.logger = std::make_shared<spdlog::logger>("stale", sink);
  MailboxNode stale(*log_, stale_store, nullptr, stale_options);
  ASSERT_TRUE(stale.start().ok());
  for (int i = 0; i < 3; ++i) dispatch(i);
  ASSERT_TRUE(eventually([&] { return stale.metrics()[0].advanced == 3; }));
  {
    MailboxNode owner(*log_, owner_store, nullptr, options(Epoch{2}));
    ASSERT_TRUE(owner.start().ok());
    dispatch(3);
    ASSERT_TRUE(owner.drain(60s).ok());
  }
  EXPECT_FALSE(stale.fatal()) << "not yet: no fence check is due";

  clock->advance_ms(1000);
  dispatch(4);
  ASSERT_TRUE(eventually([&] { return stale.fatal().has_value(); }));
  EXPECT_EQ(stale.fatal()->code(), Errc::kEpochAhead);
  const std::string stopped = stale.metrics()[0].stopped;
  for (const char* part : {"EpochAhead", "shard 0", "epoch 2", "epoch 1", "1000 ms"}) {
    EXPECT_NE(stopped.find(part), std::string::npos) << part << " not in: " << stopped;
  }
  bool logged = false;
  for (const auto& line : sink->last_formatted()) {
    logged = logged || (line.find("critical") != std::string::npos &&
                        line.find("shard 0: stopping: " + stopped) != std::string::npos);
  }
  EXPECT_TRUE(logged) << "no critical line for the fenced shard";
  stale.stop();
  auto w = owner_store.lane_watermarks(ShardId{0}, Epoch{2});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)[0].epoch(), Epoch{2}) << "the stale owner never wrote past the new epoch";
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

// Decision 129: the node materialising a recall entry removes the recalled SEND's body from the
// recipients' entries (the entry stays, as a tombstone the recall entry explains); other messages keep
// theirs.
TEST_F(NodeTest, ARecallEntryRemovesTheRecalledSendsBodyFromTheMailbox) {
  dispatch(0);
  dispatch(1);
  dispatch_recall(0, 2);
  MailboxNode node(*log_, *store_, &recorder_, options());
  ASSERT_TRUE(node.start().ok());
  ASSERT_TRUE(node.drain(60s).ok());
  for (const UserId& u : {a_, b_}) {
    auto entries = mailbox(u);
    ASSERT_EQ(entries.size(), 3u);
    EXPECT_EQ(entries[0].message.id, message_id_of(0, Offset{0}));
    EXPECT_EQ(entries[0].message.body, "") << u.str();
    EXPECT_EQ(entries[1].message.body, "message 1");
    EXPECT_EQ(entries[2].message.client_msg_id, "~recall");
  }
}

// Decision 157: the recall entry names the message's applied edits, and the node removes their text from
// the recipients' ~edit entries too; each keeps its JSON with "body":"", the very bytes fanout dispatches
// for that edit read again after the recall. Another message's edit keeps its text.
TEST_F(NodeTest, ARecallEntryRemovesItsEditsTextFromTheMailbox) {
  MessageState target, other;
  target.id = message_id_of(0, Offset{0});
  other.id = message_id_of(0, Offset{1});
  dispatch(0);
  dispatch(1);
  dispatch_event(target, MessageEventKind::kEdit, "changed once", 2);
  dispatch_event(other, MessageEventKind::kEdit, "the other's edit", 3);
  dispatch_event(target, MessageEventKind::kEdit, "changed twice", 4);
  dispatch_event(target, MessageEventKind::kRecall, "", 5);
  MailboxNode node(*log_, *store_, &recorder_, options());
  ASSERT_TRUE(node.start().ok());
  ASSERT_TRUE(node.drain(60s).ok());
  for (const UserId& u : {a_, b_}) {
    auto entries = mailbox(u);
    ASSERT_EQ(entries.size(), 6u);
    EXPECT_EQ(entries[0].message.body, "") << u.str();
    EXPECT_EQ(entries[1].message.body, "message 1");
    EXPECT_EQ(entries[2].message.id, message_id_of(0, Offset{2}));
    EXPECT_EQ(entries[2].message.client_msg_id, "~edit");
    EXPECT_EQ(entries[2].message.body, event_entry_body(target, MessageEventKind::kEdit, a_, "", 2));
    EXPECT_EQ(entries[3].message.body,
              event_entry_body(other, MessageEventKind::kEdit, a_, "the other's edit", 3));
    EXPECT_EQ(entries[4].message.body, event_entry_body(target, MessageEventKind::kEdit, a_, "", 4));
    EXPECT_EQ(entries[5].message.client_msg_id, "~recall");
    for (const auto& e : entries) {
      EXPECT_EQ(e.message.body.find("changed"), std::string::npos) << u.str() << ": " << e.message.body;
    }
  }
}

// Decision 160: a member removed between the SEND and its recall gets no recall entry, but the recall's
// record of their shard names them as a former recipient, and the node removes the body from their entry
// too. Where no recipient of the recall is left in the shard, that record has no chunk at all: the node
// begins, redacts and finishes it, and writes nobody an entry.
TEST_F(NodeTest, ARecallRedactsItsFormerRecipientsEntriesAndWritesThemNone) {
  UserId elsewhere;  // a user of another shard: the only recipient of the second recall
  for (int i = 0; elsewhere.empty(); ++i) {
    UserId u = UserId::parse("other" + std::to_string(i)).value();
    if (shards_.shard_of(u).value != 0) elsewhere = u;
  }
  // The recall read at Outbox offset `at` of message `n`, to `recipients`, naming `former`: shard 0's record.
  auto dispatch_recall_to = [&](int n, uint64_t at, std::vector<UserId> recipients,
                                std::vector<UserId> former) {
    MessageState target;
    target.id = message_id_of(0, Offset{static_cast<uint64_t>(n)});
    target.events[at] =
        EventOutcome{MessageEventKind::kRecall, true, EventRefusal::kNone, a_, kServerTimeMs, ""};
    OutboxRecord r;
    r.sender = a_;
    r.conversation = ConversationId::parse("g:team").value();
    r.client_msg_id = event_entry_client_id(MessageEventKind::kRecall);
    r.server_time_ms = kServerTimeMs;
    r.body = event_entry_body(target, MessageEventKind::kRecall, a_, "", at);
    auto plan = plan_dispatches_to(r, 0, Offset{at}, shards_, 256, std::move(recipients)).value();
    EXPECT_EQ(add_former_recipients(plan, shards_, std::move(former)), 0u);
    for (const ShardDispatch& d : plan) {
      if (d.shard.value == 0) return log_->append_sync(0, "", encode_dispatch_record(d.record)).value();
    }
    ADD_FAILURE() << "no record for shard 0";
    return Offset{};
  };
  dispatch(0);
  dispatch_recall_to(0, 1, {a_}, {b_});  // b was removed before the recall
  dispatch(2);
  const Offset last = dispatch_recall_to(2, 3, {elsewhere}, {a_, b_});  // both were removed
  MailboxNode node(*log_, *store_, &recorder_, options());
  ASSERT_TRUE(node.start().ok());
  ASSERT_TRUE(node.drain(60s).ok());
  EXPECT_EQ(frontier(), compose(Epoch{1}, last).value());
  EXPECT_TRUE(quarantined().empty());
  const auto at_a = mailbox(a_);
  ASSERT_EQ(at_a.size(), 3u);
  EXPECT_EQ(at_a[0].message.body, "");
  EXPECT_EQ(at_a[1].message.client_msg_id, "~recall");
  EXPECT_EQ(at_a[2].message.id, message_id_of(0, Offset{2}));
  EXPECT_EQ(at_a[2].message.body, "") << "a former recipient of the second recall";
  const auto at_b = mailbox(b_);
  ASSERT_EQ(at_b.size(), 2u) << "b received no recall entry";
  for (const auto& e : at_b) {
    EXPECT_EQ(e.message.client_msg_id.front(), 'c') << e.message.client_msg_id;
    EXPECT_EQ(e.message.body, "") << e.message.client_msg_id;
  }
}

// The recall's finish waits for its redaction: while the redaction fails the frontier stays below the
// recall (so a process killed now replays it), and once it succeeds no body is left.
TEST_F(NodeTest, TheFrontierPassesARecallOnlyOnceItsRedactionSucceeded) {
  testing::FlakyStore flaky(*store_);
  flaky.fail_redact = 1'000'000;
  MailboxNode node(*log_, flaky, &recorder_, options());
  ASSERT_TRUE(node.start().ok());
  dispatch(0);
  const Offset recall = dispatch_recall(0, 1);
  ASSERT_TRUE(eventually([&] { return flaky.redact_calls.load() >= 3; }));
  EXPECT_LT(frontier(), compose(Epoch{1}, recall).value());
  flaky.fail_redact = 0;
  ASSERT_TRUE(node.drain(60s).ok());
  EXPECT_EQ(frontier(), compose(Epoch{1}, recall).value());
  EXPECT_EQ(mailbox(b_).at(0).message.body, "");
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
