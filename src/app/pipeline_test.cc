// The pipeline halves of e2e scenarios 10, 11, 12 and 14, in process: Outbox append -> fanout -> node ->
// store, on the memory and embedded stores (the embedded one also across restarts of the whole pipeline).
#include "app/pipeline.h"
#include "app/quarantine_view.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <thread>

#include "log/testing/temp_dir.h"
#include "outbox/outbox_record.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kShards = 4;
constexpr uint32_t kPartitions = 3;

class PipelineTest : public ::testing::TestWithParam<std::string> {
 protected:
  AppConfig config(Epoch epoch = Epoch{1}) {
    AppConfig c;
    c.data_dir = dir_.path();
    c.log.data_dir = dir_.path();
    c.store.backend = GetParam();
    c.store.data_dir = dir_.sub("mailbox");
    c.store.shard_count = kShards;
    c.shards = kShards;
    c.outbox_partitions = kPartitions;
    for (uint32_t s = 0; s < kShards; ++s) c.owned_shards.push_back(ShardId{s});
    c.epoch = epoch;
    return c;
  }
  bool persistent() const { return GetParam() != "memory"; }

  std::unique_ptr<Pipeline> open(Epoch epoch = Epoch{1}, PipelineRoles roles = {}) {
    auto p = Pipeline::open(config(epoch), roles, nullptr);
    EXPECT_TRUE(p.ok()) << p.error().to_string();
    return std::move(p).value();
  }

  // Sends message number n from `from` to `to` as the gateway would.
  void send(Pipeline& p, const std::string& from, const std::string& to, int n) {
    OutboxRecord r;
    r.sender = UserId::parse(from).value();
    r.conversation = direct_conversation(r.sender, UserId::parse(to).value()).value();
    r.client_msg_id = "c" + std::to_string(n);
    r.server_time_ms = SystemClock().now_ms();  // current: the node's retention sweep keeps it
    r.body = "m" + std::to_string(n);
    ASSERT_TRUE(p.outbox()
                    .append_sync(outbox_partition_of(r.conversation, kPartitions), r.conversation.str(),
                                 encode_outbox_record(r))
                    .ok());
    sent_[r.sender.str()].push_back(r.body);
    if (from != to) sent_[to].push_back(r.body);
  }

  static std::vector<MailboxEntry> mailbox(MailboxStore& store, const std::string& user) {
    std::vector<MailboxEntry> out;
    MailboxSeq after;
    while (true) {
      auto page = store.read_mailbox(MailboxQuery{UserId::parse(user).value(), after, 1000});
      EXPECT_TRUE(page.ok()) << page.error().to_string();
      if (!page.ok()) return out;
      out.insert(out.end(), page->entries.begin(), page->entries.end());
      if (!page->more) return out;
      after = out.back().seq;
    }
  }

  // Every user sees each message sent to or by them exactly once, in per-conversation send order, with
  // strictly increasing seqs; and every shard's frontier is the last advancing record of its log.
  void expect_delivered(Pipeline& p) {
    for (const auto& [user, bodies] : sent_) {
      auto entries = mailbox(p.store(), user);
      std::multiset<std::string> want(bodies.begin(), bodies.end()), got;
      for (size_t i = 0; i < entries.size(); ++i) {
        got.insert(entries[i].message.body);
        if (i > 0) {
          EXPECT_LT(entries[i - 1].seq, entries[i].seq) << user;
        }
      }
      EXPECT_EQ(got, want) << user;
      EXPECT_EQ(got.size(), std::set<std::string>(got.begin(), got.end()).size())
          << user << " saw a duplicate";
    }
  }

  // Waits until every message sent is visible to its recipients (the pipeline runs on its own).
  void wait_delivered(Pipeline& p) {
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    while (std::chrono::steady_clock::now() < deadline) {
      bool all = true;
      for (const auto& [user, bodies] : sent_) all = all && mailbox(p.store(), user).size() >= bodies.size();
      if (all) return;
      std::this_thread::sleep_for(5ms);
    }
    ADD_FAILURE() << "messages not delivered in time";
  }

  MailboxSeq frontier(Pipeline& p, uint32_t shard) {
    return p.store().lane_watermarks(ShardId{shard}, Epoch{kMaxEpoch}).value()[0];
  }

  testing::TempDir dir_;
  std::map<std::string, std::vector<std::string>> sent_;  // user -> bodies they must see
};

TEST_P(PipelineTest, OutboxToVisibleMailboxesWithContiguousFrontiers) {
  auto p = open();
  ASSERT_TRUE(p->start().ok());
  for (int i = 0; i < 100; ++i)
    send(*p, "user" + std::to_string(i % 7), "user" + std::to_string((i + 3) % 9), i);
  send(*p, "solo", "solo", 100);
  wait_delivered(*p);
  ASSERT_TRUE(p->shutdown().ok());
  expect_delivered(*p);
  for (uint32_t s = 0; s < kShards; ++s) {
    const uint64_t end = p->mailbox_log().end_offset(s)->value;
    if (end == 0) continue;
    EXPECT_EQ(frontier(*p, s), compose(Epoch{1}, Offset{end - 1}).value()) << "shard " << s;
  }
  auto history = p->history().read(HistoryQuery{
      direct_conversation(UserId::parse("user0").value(), UserId::parse("user3").value()).value(),
      std::nullopt, 200});
  ASSERT_TRUE(history.ok());
  EXPECT_FALSE(history->messages.empty());
}

// Issue 38: the node's store writes the inbox beside the entries, so once the messages are visible the
// pipeline's Inbox counts them (and survives a restart of the whole pipeline on a persistent store).
TEST_P(PipelineTest, TheNodeWritesTheInboxBesideTheEntries) {
  const UserId alice = UserId::parse("alice").value(), bob = UserId::parse("bob").value();
  const ConversationId c = direct_conversation(alice, bob).value();
  {
    auto p = open();
    ASSERT_NE(p->inbox(), nullptr);
    ASSERT_TRUE(p->start().ok());
    for (int i = 0; i < 5; ++i) send(*p, "alice", "bob", i);
    send(*p, "bob", "alice", 5);
    wait_delivered(*p);
    ASSERT_TRUE(p->shutdown().ok());
    auto unread = p->inbox()->unread(bob, c);
    ASSERT_TRUE(unread.ok()) << unread.error().to_string();
    EXPECT_EQ(unread->first, 5u) << "bob's own message does not count";
    auto page = p->inbox()->conversations(alice, std::nullopt, 10);
    ASSERT_TRUE(page.ok()) << page.error().to_string();
    ASSERT_EQ(page->items.size(), 1u);
    EXPECT_EQ(page->items[0].last.preview, "m5");
    EXPECT_EQ(page->items[0].unread, 1u);
  }
  if (!persistent()) return;
  auto again = open();
  auto unread = again->inbox()->unread(bob, c);
  ASSERT_TRUE(unread.ok()) << unread.error().to_string();
  EXPECT_EQ(unread->first, 5u);
}

// Scenario 10, in process: the node is replaced while messages keep coming.
TEST_P(PipelineTest, NodeRestartMidStreamLosesNothing) {
  auto p = open(Epoch{1}, PipelineRoles{true, false, true});
  ASSERT_TRUE(p->start().ok());
  NodeOptions o;
  o.shards = config().owned_shards;
  o.poll_wait = 10ms;
  o.quarantine = &p->quarantine_log();
  auto node = std::make_unique<MailboxNode>(p->mailbox_log(), p->store(), nullptr, o);
  ASSERT_TRUE(node->start().ok());
  std::thread sender([&] {
    for (int i = 0; i < 300; ++i) send(*p, "a" + std::to_string(i % 5), "b" + std::to_string(i % 3), i);
  });
  while (total(node->metrics()).advanced < 50) std::this_thread::sleep_for(1ms);
  node->stop();
  node = std::make_unique<MailboxNode>(p->mailbox_log(), p->store(), nullptr, o);
  ASSERT_TRUE(node->start().ok());
  sender.join();
  wait_delivered(*p);
  ASSERT_TRUE(p->fanout()->drain(60s).ok());
  ASSERT_TRUE(node->drain(60s).ok());
  expect_delivered(*p);
  for (uint32_t s = 0; s < kShards; ++s) {
    const uint64_t end = p->mailbox_log().end_offset(s)->value;
    if (end > 0) {
      EXPECT_EQ(frontier(*p, s).offset().value, end - 1) << "shard " << s;
    }
  }
}

// Scenario 10 across a process restart: the pipeline is torn down without draining and reopened.
TEST_P(PipelineTest, WholePipelineRestartLosesNothing) {
  if (!persistent()) GTEST_SKIP() << "the memory store does not survive a restart";
  {
    auto p = open();
    ASSERT_TRUE(p->start().ok());
    for (int i = 0; i < 150; ++i) send(*p, "x" + std::to_string(i % 4), "y" + std::to_string(i % 6), i);
    // No shutdown(): whatever is in flight is cut off, as by a crash of the process.
  }
  auto p = open();
  for (int i = 150; i < 200; ++i) send(*p, "x" + std::to_string(i % 4), "y" + std::to_string(i % 6), i);
  ASSERT_TRUE(p->start().ok());
  wait_delivered(*p);
  ASSERT_TRUE(p->shutdown().ok());
  expect_delivered(*p);
}

// Scenario 11: replay the Outbox from the start; repeated observations reuse the canonical seqs.
TEST_P(PipelineTest, FanoutReplayShowsNothingTwice) {
  auto p = open();
  ASSERT_TRUE(p->start().ok());
  for (int i = 0; i < 60; ++i) send(*p, "r" + std::to_string(i % 3), "s" + std::to_string(i % 4), i);
  wait_delivered(*p);
  std::map<std::string, std::vector<MailboxEntry>> before;
  for (const auto& [user, bodies] : sent_) before[user] = mailbox(p->store(), user);
  const uint64_t repeated_before = total(p->node()->metrics()).repeated;

  for (uint32_t part = 0; part < kPartitions; ++part)
    ASSERT_TRUE(p->fanout()->replay_from(part, Offset{0}).ok());
  for (int i = 60; i < 70; ++i) send(*p, "r" + std::to_string(i % 3), "s" + std::to_string(i % 4), i);
  wait_delivered(*p);
  ASSERT_TRUE(p->shutdown().ok());
  expect_delivered(*p);
  for (const auto& [user, entries] : before) {
    auto now = mailbox(p->store(), user);
    ASSERT_GE(now.size(), entries.size());
    for (size_t i = 0; i < entries.size(); ++i) EXPECT_EQ(now[i], entries[i]) << user;  // same seqs
  }
  EXPECT_GT(total(p->node()->metrics()).repeated, repeated_before);
}

// Scenario 11 on a stopped instance: rewind the fanout group, restart.
TEST_P(PipelineTest, OfflineFanoutRewindReplaysOnRestart) {
  if (!persistent()) GTEST_SKIP() << "the memory store does not survive a restart";
  {
    auto p = open();
    ASSERT_TRUE(p->start().ok());
    for (int i = 0; i < 40; ++i) send(*p, "u" + std::to_string(i % 3), "v" + std::to_string(i % 2), i);
    wait_delivered(*p);
    ASSERT_TRUE(p->shutdown().ok());
  }
  uint64_t dispatched_before = 0;
  {
    auto p = open(Epoch{1}, PipelineRoles{false, false, false});
    for (uint32_t s = 0; s < kShards; ++s) dispatched_before += p->mailbox_log().end_offset(s)->value;
    auto rewound = rewind_fanout(p->outbox(), {}, Offset{0});
    ASSERT_TRUE(rewound.ok());
    EXPECT_EQ(rewound->size(), kPartitions);
  }
  auto p = open();
  ASSERT_TRUE(p->start().ok());
  ASSERT_TRUE(p->shutdown().ok());
  uint64_t dispatched_after = 0;
  for (uint32_t s = 0; s < kShards; ++s) dispatched_after += p->mailbox_log().end_offset(s)->value;
  EXPECT_EQ(dispatched_after, 2 * dispatched_before);  // every record observed twice
  expect_delivered(*p);                                // and still shown once
}

// Scenario 12: a new epoch continues the shard; a node configured below the stored epoch refuses.
TEST_P(PipelineTest, OwnershipChangeContinuesAndAStaleEpochRefuses) {
  if (!persistent()) GTEST_SKIP() << "the memory store does not survive a restart";
  {
    auto p = open(Epoch{1});
    ASSERT_TRUE(p->start().ok());
    for (int i = 0; i < 20; ++i) send(*p, "p" + std::to_string(i % 2), "q" + std::to_string(i % 3), i);
    wait_delivered(*p);
    ASSERT_TRUE(p->shutdown().ok());
  }
  {
    auto p = open(Epoch{2});
    ASSERT_TRUE(p->start().ok());
    for (int i = 20; i < 40; ++i) send(*p, "p" + std::to_string(i % 2), "q" + std::to_string(i % 3), i);
    wait_delivered(*p);
    ASSERT_TRUE(p->shutdown().ok());
    expect_delivered(*p);
    auto entries = mailbox(p->store(), "q0");
    ASSERT_FALSE(entries.empty());
    EXPECT_EQ(entries.front().seq.epoch(), Epoch{1});
    EXPECT_EQ(entries.back().seq.epoch(), Epoch{2});
  }
  auto p = open(Epoch{1});
  Status s = p->start();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Errc::kEpochAhead);
}

// Scenario 14: a burst to one shard is finished in pages, and every message is visible.
TEST_P(PipelineTest, ABurstToOneShardIsFinishedInPages) {
  auto p = open();
  const ShardMap shards = ShardMap::create(kShards).value();
  std::vector<std::string> users;  // users of shard 0 only
  for (int i = 0; users.size() < 6; ++i) {
    const std::string u = "burst" + std::to_string(i);
    if (shards.shard_of(UserId::parse(u).value()).value == 0) users.push_back(u);
  }
  // Queued in the Outbox before the roles start, so none of it is the node's start-up catch-up.
  for (int i = 0; i < 1500; ++i) send(*p, users[i % 3], users[3 + i % 3], i);
  ASSERT_TRUE(p->start().ok());
  wait_delivered(*p);
  ASSERT_TRUE(p->shutdown().ok());
  expect_delivered(*p);
  ASSERT_EQ(p->store().finish_page_limit(), 64u);
  const OpCounts ops = p->store().op_counts();
  EXPECT_GT(ops.mean_page(), 1.0) << ops.to_string();
}

// A record the store refuses is quarantined (durably, before the frontier passes it), counted in
// qim_node_quarantined_records_total, listed by `qim quarantine list`; the messages around it arrive.
TEST_P(PipelineTest, ARefusedRecordIsQuarantinedCountedAndListed) {
  auto p = open();
  send(*p, "alice", "bob", 0);
  ASSERT_TRUE(p->mailbox_log().append_sync(0, "", "not a dispatch record").ok());
  ASSERT_TRUE(p->start().ok());
  send(*p, "alice", "bob", 1);
  wait_delivered(*p);
  ASSERT_TRUE(p->shutdown().ok());
  expect_delivered(*p);
  const std::string metrics = p->prometheus();
  EXPECT_NE(metrics.find("qim_node_quarantined_records_total{shard=\"0\",reason=\"CorruptEntry\"} 1"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("qim_store_inflight_records 0"), std::string::npos) << metrics;
  auto entries = read_quarantine(p->quarantine_log(), Offset{0}, 100);
  ASSERT_TRUE(entries.ok()) << entries.error().to_string();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].record.raw, "not a dispatch record");
  const std::string listed = render_quarantine_list(*entries, false);
  EXPECT_NE(listed.find("CorruptEntry"), std::string::npos) << listed;
  const std::string json = render_quarantine_list(*entries, true);
  EXPECT_NE(json.find("\"reason\":\"CorruptEntry\""), std::string::npos) << json;
  auto shown = render_quarantine_show(*entries, (*entries)[0].position.value, false);
  ASSERT_TRUE(shown.ok());
  EXPECT_NE(shown->find("does not decode"), std::string::npos) << *shown;
  EXPECT_EQ(render_quarantine_show(*entries, 99, false).code(), Errc::kNotFound);
}

// The embedded logs' fdatasyncs and journal checkpoints are on /metrics: a message costs one journal sync
// in the Outbox (the open's checkpoint had nothing to sync), and the mailbox log counts its own.
TEST_P(PipelineTest, TheEmbeddedLogsSyncsAndCheckpointsAreOnMetrics) {
  auto p = open();
  ASSERT_TRUE(p->start().ok());
  send(*p, "alice", "bob", 0);
  wait_delivered(*p);
  const std::string text = p->prometheus();
  auto value = [&](const std::string& series) -> std::optional<uint64_t> {
    const size_t at = text.find("\n" + series + " ");
    if (at == std::string::npos) return std::nullopt;
    return std::stoull(text.substr(at + series.size() + 2));
  };
  EXPECT_EQ(value("qim_log_syncs_total{log=\"outbox\"}"), 1u) << text;
  EXPECT_EQ(value("qim_log_checkpoints_total{log=\"outbox\"}"), 1u) << text;
  EXPECT_GE(value("qim_log_syncs_total{log=\"mailbox\"}").value_or(0), 1u) << text;
  ASSERT_TRUE(p->shutdown().ok());
}

// The group store's operations are on the pipeline's /metrics (qim_group_store_ops_total), and absent in a
// process whose roles do not open it.
TEST_P(PipelineTest, TheGroupStoresOperationsAreOnMetricsAndAbsentWithoutOne) {
  {
    auto alone = open(Epoch{1}, PipelineRoles{.fanout = false, .archiver = false, .groups = false});
    EXPECT_EQ(alone->groups(), nullptr);
    EXPECT_EQ(alone->prometheus().find("qim_group_store_ops_total"), std::string::npos);
  }
  auto p = open();
  ASSERT_NE(p->groups(), nullptr);
  const GroupId group = GroupId::parse("0123456789abcdef0123456789abcdef").value();
  ASSERT_TRUE(p->groups()->load(group).ok());
  ASSERT_TRUE(p->groups()->member(group, UserId::parse("alice").value()).ok());
  const std::string text = p->prometheus();
  EXPECT_NE(text.find("# TYPE qim_group_store_ops_total counter\n"), std::string::npos) << text;
  EXPECT_NE(text.find("qim_group_store_ops_total{kind=\"read\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("qim_group_store_ops_total{kind=\"insert\"} 0\n"), std::string::npos) << text;
}

INSTANTIATE_TEST_SUITE_P(Stores, PipelineTest, ::testing::Values("memory", "embedded"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace qim
