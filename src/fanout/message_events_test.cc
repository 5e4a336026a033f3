// Fanout decides EDIT and RECALL at their Outbox offsets (fanout/message_events.h): applied events are
// dispatched as their entries, refused ones append nothing, and a replay from before the SEND decides
// the same.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "fanout/fanout.h"
#include "log/testing/temp_dir.h"
#include "log/testing/test_log.h"
#include "mailbox/message_codec.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kShards = 2;
constexpr int64_t kT0 = 1'700'000'000'000;

class MessageEventsFanoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    outbox_ = testing::open_test_log(dir_.sub("outbox"), 1, "outbox");
    mailbox_log_ = testing::open_test_log(dir_.sub("mailbox"), kShards, "mailbox");
    messages_ = make_memory_message_state_store();
  }
  uint64_t append(const std::string& from, const std::string& cmid, int64_t at, std::string body,
                  std::optional<MessageEvent> event = std::nullopt) {
    OutboxRecord r;
    r.sender = UserId::parse(from).value();
    r.conversation = ConversationId::parse("d:alice:bob").value();
    r.client_msg_id = cmid;
    r.server_time_ms = at;
    r.body = std::move(body);
    r.event = event;
    const Offset o = outbox_->append_sync(0, r.conversation.str(), encode_outbox_record(r)).value();
    return message_id_of(0, o).value;
  }
  std::unique_ptr<Fanout> start(LifecyclePolicy policy = {}) {
    FanoutOptions o;
    o.lifecycle = policy;
    o.consumer.poll_wait = 10ms;
    o.messages = messages_.get();
    auto f = std::make_unique<Fanout>(*outbox_, *mailbox_log_, ShardMap::create(kShards).value(), o);
    EXPECT_TRUE(f->start().ok());
    EXPECT_TRUE(f->drain(60s).ok());
    return f;
  }
  // The messages dispatched, by message id (one per message whatever its shards), in id order.
  std::map<uint64_t, Message> dispatched() {
    std::map<uint64_t, Message> out;
    for (uint32_t s = 0; s < kShards; ++s) {
      const std::vector<LogRecord> records = mailbox_log_->read(s, Offset{0}, 1000, 0ms).value();
      for (const auto& rec : records) {
        auto d = decode_dispatch_record(rec.value);
        EXPECT_TRUE(d.ok());
        out[d->message.id.value] = d->message;
      }
    }
    return out;
  }
  size_t dispatch_count() {
    size_t n = 0;
    for (uint32_t s = 0; s < kShards; ++s) {
      const std::vector<LogRecord> records = mailbox_log_->read(s, Offset{0}, 1000, 0ms).value();
      n += records.size();
    }
    return n;
  }

  testing::TempDir dir_;
  std::unique_ptr<EmbeddedLog> outbox_, mailbox_log_;
  std::unique_ptr<MessageStateStore> messages_;
};

TEST_F(MessageEventsFanoutTest, EditAndRecallAreDispatchedAsEntriesRefusalsAppendNothing) {
  const uint64_t hello = append("alice", "c1", kT0, "helo");
  const uint64_t edit =
      append("alice", "c2", kT0 + 1000, "hello", MessageEvent{MessageEventKind::kEdit, MessageId{hello}});
  const uint64_t bobs_edit =
      append("bob", "c3", kT0 + 1000, "hacked", MessageEvent{MessageEventKind::kEdit, MessageId{hello}});
  const uint64_t late = append("alice", "c4", kT0 + 49LL * 3600 * 1000, "too late",
                               MessageEvent{MessageEventKind::kEdit, MessageId{hello}});
  const uint64_t unknown =
      append("alice", "c5", kT0 + 2000, "x", MessageEvent{MessageEventKind::kEdit, MessageId{999}});
  const uint64_t recall =
      append("alice", "c6", kT0 + 3000, "", MessageEvent{MessageEventKind::kRecall, MessageId{hello}});
  const uint64_t after =
      append("alice", "c7", kT0 + 4000, "again", MessageEvent{MessageEventKind::kEdit, MessageId{hello}});
  auto f = start();
  const FanoutMetrics m = f->metrics();
  EXPECT_EQ(m.events, 6u);
  EXPECT_EQ(m.events_refused, 4u);
  auto d = dispatched();
  ASSERT_EQ(d.size(), 3u);  // the SEND, the edit, the recall
  EXPECT_EQ(d.at(hello).body, "helo");
  EXPECT_EQ(d.at(edit).client_msg_id, "~edit");
  EXPECT_EQ(d.at(edit).body, "{\"event\":\"edit\",\"message_id\":\"" + std::to_string(hello) +
                                 "\",\"body\":\"hello\",\"edited_at\":" + std::to_string(kT0 + 1000) +
                                 ",\"edit_count\":1}");
  EXPECT_EQ(d.at(recall).client_msg_id, "~recall");
  for (uint64_t refused : {bobs_edit, late, unknown, after}) EXPECT_EQ(d.count(refused), 0u) << refused;
  auto state = messages_->load(MessageId{hello}).value();
  ASSERT_TRUE(state);
  EXPECT_TRUE(state->recalled());
  EXPECT_EQ(state->events.at(bobs_edit & kMaxOffset).refusal, EventRefusal::kNotAllowed);
  EXPECT_EQ(state->events.at(late & kMaxOffset).refusal, EventRefusal::kPastWindow);
  EXPECT_EQ(state->events.at(after & kMaxOffset).refusal, EventRefusal::kRecalled);
  EXPECT_EQ(messages_->watermark(0).value(), (after & kMaxOffset) + 1);
}

TEST_F(MessageEventsFanoutTest, ReplayFromBeforeTheSendDecidesTheSame) {
  const uint64_t hello = append("alice", "c1", kT0, "hello");
  const uint64_t edit =
      append("alice", "c2", kT0 + 1000, "hello!", MessageEvent{MessageEventKind::kEdit, MessageId{hello}});
  append("alice", "c3", kT0 + 2000, "", MessageEvent{MessageEventKind::kRecall, MessageId{hello}});
  auto f = start();
  const auto before = dispatched();
  const size_t records = dispatch_count();
  const MessageState state = *messages_->load(MessageId{hello}).value();
  f.reset();
  // A new fanout (an empty cache: the state comes from the store) replays the partition from offset 0.
  ASSERT_TRUE(rewind_fanout(*outbox_, {}, Offset{0}).ok());
  // Even with edits now switched off (window 0), the edit read at offset 1 keeps its recorded outcome.
  f = start(LifecyclePolicy{.edit_window_ms = 0});
  EXPECT_EQ(f->metrics().events, 2u);
  EXPECT_EQ(f->metrics().events_refused, 0u);
  // The same records appended again (the store sees repeated observations), nothing else: the edit at
  // offset 1 was applied before the recall and still is; the recall still applies.
  EXPECT_EQ(dispatch_count(), 2 * records);
  // Decision 129: the recalled SEND and its edit come again without the body (the replayed SEND's with
  // none, the edit entry's "body" empty), under their original identities.
  auto expected = before;
  expected.at(hello).body.clear();
  const std::string edited_body = R"("body":"hello!")";
  std::string& edit_entry = expected.at(edit).body;
  ASSERT_NE(edit_entry.find(edited_body), std::string::npos) << edit_entry;
  edit_entry.replace(edit_entry.find(edited_body), edited_body.size(), R"("body":"")");
  EXPECT_EQ(dispatched(), expected);
  EXPECT_EQ(*messages_->load(MessageId{hello}).value(), state);
  for (uint32_t s = 0; s < kShards; ++s) {  // the replayed records keep the first observations' identities
    const std::vector<LogRecord> records = mailbox_log_->read(s, Offset{0}, 1000, 0ms).value();
    ASSERT_EQ(records.size() % 2, 0u);
    for (size_t i = 0; i < records.size() / 2; ++i) {
      const DispatchRecord first = decode_dispatch_record(records[i].value).value();
      const DispatchRecord again = decode_dispatch_record(records[i + records.size() / 2].value).value();
      EXPECT_EQ(again.identity, first.identity);
    }
  }
}

// A memory store behind every call, for the stores below to change one of them.
class ForwardingStore : public MessageStateStore {
 public:
  Result<std::optional<MessageState>> load(MessageId id) override { return inner_->load(id); }
  Result<std::vector<std::optional<MessageState>>> load_many(std::span<const MessageId> ids) override {
    return inner_->load_many(ids);
  }
  Status put(const MessageState& state, uint32_t partition, uint64_t event_offset) override {
    return inner_->put(state, partition, event_offset);
  }
  Status raise_watermark(uint32_t partition, uint64_t event_offset) override {
    return inner_->raise_watermark(partition, event_offset);
  }
  Result<uint64_t> watermark(uint32_t partition) override { return inner_->watermark(partition); }

 protected:
  std::unique_ptr<MessageStateStore> inner_ = make_memory_message_state_store();
};

// Counts the watermark reads.
class CountingStore final : public ForwardingStore {
 public:
  Result<uint64_t> watermark(uint32_t partition) override {
    ++watermark_reads;
    return inner_->watermark(partition);
  }
  std::atomic<int> watermark_reads{0};
};

// Decision 168: batches of plain SENDs that continue each other read the watermark once, not once each;
// after a batch with an event, and after a replay, it is read again, and the replayed recalled SEND still
// comes without its body.
TEST_F(MessageEventsFanoutTest, ContinuingBatchesOfPlainSendsReadTheWatermarkOnce) {
  auto counting = std::make_unique<CountingStore>();
  CountingStore* store = counting.get();
  messages_ = std::move(counting);
  FanoutOptions o;
  o.consumer.poll_wait = 10ms;
  o.messages = messages_.get();
  Fanout f(*outbox_, *mailbox_log_, ShardMap::create(kShards).value(), o);
  ASSERT_TRUE(f.start().ok());
  auto handled = [&](uint64_t n) {
    for (int i = 0; i < 1000 && f.metrics().records < n; ++i) std::this_thread::sleep_for(10ms);
    return f.metrics().records >= n;
  };
  const uint64_t hello = append("alice", "c1", kT0, "hello");
  ASSERT_TRUE(handled(1));
  EXPECT_EQ(store->watermark_reads.load(), 1);
  append("alice", "c2", kT0 + 1, "two");
  ASSERT_TRUE(handled(2));
  append("bob", "c3", kT0 + 2, "three");
  ASSERT_TRUE(handled(3));
  EXPECT_EQ(store->watermark_reads.load(), 1) << "a batch that continued the last one read the watermark";
  append("alice", "c4", kT0 + 3, "", MessageEvent{MessageEventKind::kRecall, MessageId{hello}});
  ASSERT_TRUE(handled(4));
  append("bob", "c5", kT0 + 4, "five");
  ASSERT_TRUE(handled(5));
  EXPECT_EQ(store->watermark_reads.load(), 2) << "after a batch with an event the watermark is read again";
  ASSERT_TRUE(f.replay_from(0, Offset{0}).ok());
  ASSERT_TRUE(handled(10));
  EXPECT_EQ(store->watermark_reads.load(), 3) << "a replay continues nothing: the watermark is read again";
  f.stop();
  EXPECT_EQ(dispatched().at(hello).body, "") << "the replayed recalled SEND came with its body";
}

// A store that writes the state and the watermark one after the other, as the CQL store does, and stops
// between them on its first put (a crash there: the state written, the watermark not, Io returned).
class TwoStepStore final : public ForwardingStore {
 public:
  Status put(const MessageState& state, uint32_t partition, uint64_t event_offset) override {
    // The inner store's own watermark is of another partition: only ours counts.
    QIM_RETURN_IF_ERROR(inner_->put(state, partition + 1000, event_offset));
    if (crash_once_) {
      crash_once_ = false;
      return Error(Errc::kIo, "stopped between the state and the watermark");
    }
    return raise_watermark(partition, event_offset);
  }

 private:
  bool crash_once_ = true;
};

// The retry of an event whose state was written but whose watermark was not (decision 128) raises the
// watermark: the archiver, which waits for it, is not left waiting.
TEST_F(MessageEventsFanoutTest, AStopBetweenTheStateAndTheWatermarkIsCompletedByTheRetry) {
  messages_ = std::make_unique<TwoStepStore>();
  const uint64_t hello = append("alice", "c1", kT0, "hello");
  const uint64_t recall =
      append("alice", "c2", kT0 + 1000, "", MessageEvent{MessageEventKind::kRecall, MessageId{hello}});
  auto f = start();
  ASSERT_TRUE(messages_->load(MessageId{hello}).value()->recalled());
  EXPECT_EQ(messages_->watermark(0).value(), (recall & kMaxOffset) + 1);
  EXPECT_EQ(dispatched().at(recall).client_msg_id, "~recall");
}

TEST_F(MessageEventsFanoutTest, ReactionsAreDispatchedWithTheirCountAndAReplayWritesTheSame) {
  const uint64_t hello = append("alice", "c1", kT0, "hello");
  const MessageEvent react{MessageEventKind::kReact, MessageId{hello}};
  const MessageEvent unreact{MessageEventKind::kUnreact, MessageId{hello}};
  const uint64_t bob = append("bob", "c2", kT0 + 10, ":+1:", react);
  const uint64_t alice = append("alice", "c3", kT0 + 20, ":+1:", react);
  const uint64_t bad = append("bob", "c4", kT0 + 30, "plain text", react);
  const uint64_t again = append("bob", "c5", kT0 + 40, ":+1:", react);
  const uint64_t back = append("bob", "c6", kT0 + 50, ":+1:", unreact);
  auto f = start();
  EXPECT_EQ(f->metrics().events, 5u);
  EXPECT_EQ(f->metrics().events_refused, 2u);
  auto d = dispatched();
  const std::string id = std::to_string(hello);
  EXPECT_EQ(d.at(bob).client_msg_id, "~react");
  EXPECT_EQ(d.at(bob).body, "{\"event\":\"react\",\"message_id\":\"" + id +
                                "\",\"by\":\"bob\",\"emoji\":\":+1:\",\"count\":1}");
  EXPECT_EQ(d.at(alice).body, "{\"event\":\"react\",\"message_id\":\"" + id +
                                  "\",\"by\":\"alice\",\"emoji\":\":+1:\",\"count\":2}");
  EXPECT_EQ(d.at(back).client_msg_id, "~unreact");
  EXPECT_EQ(d.at(back).body, "{\"event\":\"unreact\",\"message_id\":\"" + id +
                                 "\",\"by\":\"bob\",\"emoji\":\":+1:\",\"count\":1}");
  EXPECT_EQ(d.count(bad), 0u);
  EXPECT_EQ(d.count(again), 0u);
  const MessageState state = *messages_->load(MessageId{hello}).value();
  EXPECT_EQ(state.events.at(bad & kMaxOffset).refusal, EventRefusal::kBadReaction);
  EXPECT_EQ(state.events.at(again & kMaxOffset).refusal, EventRefusal::kReactionUnchanged);
  ASSERT_EQ(state.reactions().size(), 1u);
  EXPECT_EQ(state.reactions()[0].users, std::vector<UserId>{UserId::parse("alice").value()});
  // A replay from before the SEND: the state holds every later event, yet each entry is written as it was
  // (its count as of its own offset), so the store sees repeated observations only.
  const size_t records = dispatch_count();
  f.reset();
  ASSERT_TRUE(rewind_fanout(*outbox_, {}, Offset{0}).ok());
  f = start();
  EXPECT_EQ(dispatch_count(), 2 * records);
  EXPECT_EQ(dispatched(), d);
  EXPECT_EQ(*messages_->load(MessageId{hello}).value(), state);
}

}  // namespace
}  // namespace qim
