#include "fanout/fanout.h"

#include <gtest/gtest.h>

#include <set>

#include "log/testing/temp_dir.h"
#include "log/testing/test_log.h"
#include "mailbox/message_codec.h"
#include "outbox/outbox_record.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kShards = 4;

class FanoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    outbox_ = open("outbox", 2);
    mailbox_log_ = open("mailbox", kShards);
  }
  std::unique_ptr<EmbeddedLog> open(const std::string& name, uint32_t partitions) {
    return testing::open_test_log(dir_.sub(name), partitions, name);
  }
  Offset send(uint32_t partition, const std::string& from, const std::string& to) {
    OutboxRecord r;
    r.sender = UserId::parse(from).value();
    r.conversation = direct_conversation(r.sender, UserId::parse(to).value()).value();
    r.client_msg_id = "c" + std::to_string(sent_++);
    r.server_time_ms = 1'700'000'000'000;
    r.body = "hello " + to;
    return outbox_->append_sync(partition, r.conversation.str(), encode_outbox_record(r)).value();
  }
  Fanout make() {
    FanoutOptions o;
    o.consumer.poll_wait = 10ms;
    return Fanout(*outbox_, *mailbox_log_, ShardMap::create(kShards).value(), o);
  }
  // Runs a fanout until it has handled everything in the Outbox; returns what it counted.
  FanoutMetrics run_to_end() {
    Fanout f = make();
    EXPECT_TRUE(f.start().ok());
    EXPECT_TRUE(f.drain(60s).ok());
    return f.metrics();
  }
  // Every dispatch record on the mailbox log, decoded, with its partition.
  std::vector<std::pair<uint32_t, DispatchRecord>> dispatched() {
    std::vector<std::pair<uint32_t, DispatchRecord>> out;
    for (uint32_t s = 0; s < kShards; ++s) {
      const std::vector<LogRecord> records = mailbox_log_->read(s, Offset{0}, 1000, 0ms).value();
      for (const auto& rec : records) {
        auto d = decode_dispatch_record(rec.value);
        EXPECT_TRUE(d.ok());
        EXPECT_EQ(rec.key, d->identity.id.str());
        out.emplace_back(s, *std::move(d));
      }
    }
    return out;
  }

  testing::TempDir dir_;
  std::unique_ptr<EmbeddedLog> outbox_, mailbox_log_;
  int sent_ = 0;
};

TEST_F(FanoutTest, WritesOneRecordPerShardAndCommitsAfterwards) {
  const Offset first = send(0, "alice", "bob");
  send(1, "bob", "alice");
  send(1, "carol", "carol");
  const FanoutMetrics m = run_to_end();
  EXPECT_EQ(m.records, 3u);
  EXPECT_EQ(m.skipped, 0u);
  const ShardMap shards = ShardMap::create(kShards).value();
  auto records = dispatched();
  size_t entries = 0;
  for (const auto& [shard, d] : records) {
    for (const auto& chunk : d.chunks) {
      for (const auto& u : chunk) EXPECT_EQ(shards.shard_of(u).value, shard);
      entries += chunk.size();
    }
  }
  EXPECT_EQ(entries, 2u + 2u + 1u);  // alice+bob twice, carol once
  bool found = false;
  for (const auto& [shard, d] : records) {
    if (d.message.id == message_id_of(0, first)) {
      found = true;
      EXPECT_EQ(d.identity.id.str(), "m" + std::to_string(d.message.id.value) + "-s" + std::to_string(shard));
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(outbox_->committed(kFanoutGroup, 0)->value(), Offset{1});
  EXPECT_EQ(outbox_->committed(kFanoutGroup, 1)->value(), Offset{2});
}

TEST_F(FanoutTest, SkipsAndCountsARecordItCannotUseAndGoesOn) {
  send(0, "alice", "bob");
  ASSERT_TRUE(outbox_->append_sync(0, "", "not an outbox record").ok());
  OutboxRecord outsider;  // well formed, but its sender is not a party of the conversation
  outsider.conversation = direct_conversation(*UserId::parse("bob"), *UserId::parse("carol")).value();
  outsider.sender = UserId::parse("alice").value();
  ASSERT_TRUE(outbox_->append_sync(0, "", encode_outbox_record(outsider)).ok());
  send(0, "bob", "alice");
  const FanoutMetrics m = run_to_end();
  EXPECT_EQ(m.records, 2u);
  EXPECT_EQ(m.skipped, 2u);
  EXPECT_EQ(outbox_->committed(kFanoutGroup, 0)->value(), Offset{4});
}

TEST_F(FanoutTest, RewindReplaysTheSameRecordsByteForByte) {
  send(0, "alice", "bob");
  send(0, "dave", "erin");
  run_to_end();
  const auto before = dispatched();
  const uint32_t partition = 0;
  auto rewound = rewind_fanout(*outbox_, std::span(&partition, 1), Offset{0});
  ASSERT_TRUE(rewound.ok());
  ASSERT_EQ(rewound->size(), 1u);
  EXPECT_EQ((*rewound)[0].lag, 2u);
  run_to_end();
  const auto after = dispatched();
  ASSERT_EQ(after.size(), 2 * before.size());
  for (const auto& [shard, d] : before) {
    int copies = 0;
    for (const auto& [s2, d2] : after) {
      if (s2 == shard && d2.identity == d.identity) {
        ++copies;
        EXPECT_EQ(encode_dispatch_record(d2), encode_dispatch_record(d));
      }
    }
    EXPECT_EQ(copies, 2) << d.identity.id.str();
  }
  EXPECT_EQ(rewind_fanout(*outbox_, std::vector<uint32_t>{9}, Offset{0}).code(), Errc::kInvalidArgument);
}

TEST_F(FanoutTest, ReplayOnARunningFanout) {
  send(1, "alice", "bob");
  Fanout f = make();
  ASSERT_TRUE(f.start().ok());
  while (f.metrics().records < 1) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(f.replay_from(1, Offset{5}).code(), Errc::kInvalidArgument);  // beyond the end
  ASSERT_TRUE(f.replay_from(1, Offset{0}).ok());
  while (f.metrics().records < 2) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(f.drain(60s).ok());
  const ShardMap shards = ShardMap::create(kShards).value();
  const size_t per_message =
      shards.shard_of(UserId::parse("alice").value()) == shards.shard_of(UserId::parse("bob").value()) ? 1
                                                                                                       : 2;
  EXPECT_EQ(dispatched().size(), 2 * per_message);  // the message's records, twice
}

// A SEND stored twice (a retry whose first attempt was stored although the gateway could not say so) is
// dispatched once, the first time: the second record is counted and skipped, and a replay starting between
// the two skips it too.
TEST_F(FanoutTest, ASendStoredTwiceIsDispatchedOnceEvenWhenReplayedFromBetween) {
  OutboxRecord r;
  r.sender = UserId::parse("alice").value();
  r.conversation = direct_conversation(r.sender, UserId::parse("bob").value()).value();
  r.client_msg_id = "retried";
  r.server_time_ms = 1'700'000'000'000;
  r.body = "once";
  const Offset first = outbox_->append_sync(0, "", encode_outbox_record(r)).value();
  send(0, "carol", "dave");
  r.server_time_ms += 6'000;  // the retry, appended anew after its first attempt's append timed out
  const Offset again = outbox_->append_sync(0, "", encode_outbox_record(r)).value();
  const FanoutMetrics m = run_to_end();
  EXPECT_EQ(m.records, 2u);
  EXPECT_EQ(m.repeats, 1u);
  auto ids = [this] {
    std::set<uint64_t> out;
    for (const auto& [shard, d] : dispatched()) out.insert(d.message.id.value);
    return out;
  };
  EXPECT_EQ(ids().count(message_id_of(0, first).value), 1u);
  EXPECT_EQ(ids().count(message_id_of(0, again).value), 0u) << "the repeat was dispatched";
  const uint32_t partition = 0;
  ASSERT_TRUE(rewind_fanout(*outbox_, std::span(&partition, 1), Offset{first.value + 1}).ok());
  const FanoutMetrics replayed = run_to_end();
  EXPECT_EQ(replayed.repeats, 1u);
  EXPECT_EQ(ids().count(message_id_of(0, again).value), 0u) << "the replay dispatched the repeat";
}

TEST_F(FanoutTest, RefusesAMailboxLogThatDoesNotMatchTheShardCount) {
  Fanout f(*outbox_, *mailbox_log_, ShardMap::create(kShards + 1).value(), FanoutOptions{});
  Status s = f.start();
  EXPECT_EQ(s.code(), Errc::kConfig);
  EXPECT_NE(s.error().message().find("QIM_SHARDS"), std::string::npos);
}

}  // namespace
}  // namespace qim
