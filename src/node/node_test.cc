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
#include "node/node_fixture.h"
#include "node/node_test_support.h"
#include "node/page.h"
#include "node/quarantine.h"
#include "node/testing_stores.h"

namespace qim {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::kServerTimeMs;
using testing::kShards;
using testing::NodeTest;
using testing::Recorder;

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
