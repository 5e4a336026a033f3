// The archiver and EDIT/RECALL (docs/adr/0090): the history row holds the current body, a recalled
// message's row holds none, and a replay from before the SEND never writes the body again.

#include <gtest/gtest.h>

#include "archiver/archiver.h"
#include "archiver/rocks_history_store.h"
#include "log/testing/temp_dir.h"
#include "log/testing/test_log.h"
#include "outbox/outbox_record.h"

namespace qim {
namespace {

using namespace std::chrono_literals;
constexpr int64_t kT0 = 1'700'000'000'000;

// Every write the archiver makes, in order, before it reaches the store.
class RecordingHistory final : public HistoryStore {
 public:
  explicit RecordingHistory(HistoryStore& inner) : inner_(inner) {}
  Status append(const Message& m) override {
    writes.emplace_back(m.id.value, m.body);
    return inner_.append(m);
  }
  Status append_all(std::span<const Message> ms) override {
    for (const Message& m : ms) writes.emplace_back(m.id.value, m.body);
    return inner_.append_all(ms);
  }
  Result<HistoryPage> read(const HistoryQuery& q) override { return inner_.read(q); }
  OpCounts op_counts() const override { return inner_.op_counts(); }
  std::vector<std::pair<uint64_t, std::string>> writes;

 private:
  HistoryStore& inner_;
};

class ArchiverEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    outbox_ = testing::open_test_log(dir_.sub("outbox"), 1, "outbox");
    rocks_ = RocksHistoryStore::open(dir_.sub("history")).value();
    history_ = std::make_unique<RecordingHistory>(*rocks_);
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
    last_ = r;
    return outbox_->append_sync(0, "", encode_outbox_record(r)).value().value;
  }
  // What fanout records when it decides the event just appended at `offset` about the SEND at `target`.
  void decided(uint64_t target, uint64_t offset, bool applied) {
    auto s = messages_->load(MessageId{target}).value();
    MessageState state;
    if (s) {
      state = *s;
    } else {
      state.id = MessageId{target};
      state.conversation = last_.conversation;
      state.sender = UserId::parse("alice").value();
      state.client_msg_id = "c1";
      state.sent_at_ms = kT0;
    }
    state.events[offset] =
        EventOutcome{last_.event->kind, applied, applied ? EventRefusal::kNone : EventRefusal::kNotAllowed,
                     last_.sender, last_.server_time_ms};
    ASSERT_TRUE(messages_->put(state, 0, offset).ok());
  }
  std::unique_ptr<Archiver> run(std::function<Status(const Message&)> on_recall = {}) {
    ArchiverOptions o;
    o.on_recall = std::move(on_recall);
    o.consumer.poll_wait = 10ms;
    o.consumer.batch_max = 1;  // one record at a time: each write is seen as a replay makes it
    o.messages = messages_.get();
    auto a = std::make_unique<Archiver>(*outbox_, *history_, o);
    EXPECT_TRUE(a->start().ok());
    EXPECT_TRUE(a->drain(60s).ok());
    return a;
  }
  std::vector<std::string> bodies() {
    std::vector<std::string> out;
    const HistoryPage page =
        rocks_->read(HistoryQuery{ConversationId::parse("d:alice:bob").value(), std::nullopt, 200}).value();
    for (const auto& m : page.messages) out.push_back(m.body);
    return out;
  }
  // Whether any key or value the RocksDB engine holds contains `bytes` (through the engine's iterator).
  bool store_holds(const std::string& bytes) {
    std::unique_ptr<rocksdb::Iterator> it(rocks_->raw_db().NewIterator(rocksdb::ReadOptions()));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      if (it->key().ToString().find(bytes) != std::string::npos) return true;
      if (it->value().ToString().find(bytes) != std::string::npos) return true;
    }
    return false;
  }

  testing::TempDir dir_;
  std::unique_ptr<EmbeddedLog> outbox_;
  std::unique_ptr<RocksHistoryStore> rocks_;
  std::unique_ptr<RecordingHistory> history_;
  std::unique_ptr<MessageStateStore> messages_;
  OutboxRecord last_;
};

TEST_F(ArchiverEventsTest, EditRewritesTheBodyAndARefusedEditChangesNothing) {
  const uint64_t t = append("alice", "c1", kT0, "helo");
  const uint64_t e1 =
      append("alice", "c2", kT0 + 10, "hello", MessageEvent{MessageEventKind::kEdit, MessageId{t}});
  decided(t, e1, true);
  const uint64_t e2 =
      append("bob", "c3", kT0 + 20, "hacked", MessageEvent{MessageEventKind::kEdit, MessageId{t}});
  decided(t, e2, false);
  auto a = run();
  EXPECT_EQ(bodies(), std::vector<std::string>{"hello"});
  EXPECT_EQ(a->metrics().events, 1u);
}

TEST_F(ArchiverEventsTest, AnEventFanoutHasNotDecidedWaits) {
  const uint64_t t = append("alice", "c1", kT0, "secret-body-1");
  append("alice", "c2", kT0 + 10, "", MessageEvent{MessageEventKind::kRecall, MessageId{t}});
  ArchiverOptions o;
  o.consumer.poll_wait = 10ms;
  o.consumer.retry_max = 20ms;
  o.consumer.batch_max = 1;
  o.messages = messages_.get();
  Archiver a(*outbox_, *history_, o);
  ASSERT_TRUE(a.start().ok());
  EXPECT_EQ(a.drain(300ms).code(), Errc::kTimeout);  // held at the recall: fanout has not decided it
  EXPECT_EQ(bodies(), std::vector<std::string>{"secret-body-1"});
}

TEST_F(ArchiverEventsTest, RecallRemovesTheBodyAndAReplayFromBeforeTheSendNeverWritesItAgain) {
  const uint64_t t = append("alice", "c1", kT0, "secret-body-2");
  const uint64_t e =
      append("alice", "c2", kT0 + 10, "edited-body-2", MessageEvent{MessageEventKind::kEdit, MessageId{t}});
  decided(t, e, true);
  const uint64_t r =
      append("alice", "c3", kT0 + 20, "", MessageEvent{MessageEventKind::kRecall, MessageId{t}});
  decided(t, r, true);
  run();
  EXPECT_EQ(bodies(), std::vector<std::string>{""});
  rocks_->raw_db().CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr);
  EXPECT_FALSE(store_holds("secret-body-2"));
  EXPECT_FALSE(store_holds("edited-body-2"));
  // A replay of the archiver from before the SEND: not one write with a body, not even for a moment.
  history_->writes.clear();
  ASSERT_TRUE(outbox_->commit(kArchiverGroup, 0, Offset{0}).ok());
  run();
  ASSERT_FALSE(history_->writes.empty());
  for (const auto& [id, body] : history_->writes) EXPECT_EQ(body, "") << id;
  EXPECT_EQ(bodies(), std::vector<std::string>{""});
  rocks_->raw_db().CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr);
  EXPECT_FALSE(store_holds("secret-body-2"));
}

// A recall hands the message as it was to on_recall (where its attachments' objects are deleted), also
// when fanout decided the recall before the archiver read the SEND; a replay may call it again (idempotent),
// never for another message.
TEST_F(ArchiverEventsTest, RecallHandsTheOriginalMessageToOnRecall) {
  const uint64_t t = append("alice", "c1", kT0, "with-attachments");
  const uint64_t r =
      append("alice", "c2", kT0 + 20, "", MessageEvent{MessageEventKind::kRecall, MessageId{t}});
  decided(t, r, true);
  append("alice", "c3", kT0 + 30, "kept");
  std::vector<std::string> recalled;
  auto hook = [&](const Message& m) {
    recalled.push_back(m.body);
    return Status();
  };
  run(hook);
  EXPECT_EQ(recalled, std::vector<std::string>{"with-attachments"});
  // A replay from before the SEND: the SEND is written as its tombstone; the hook again, for it only.
  ASSERT_TRUE(outbox_->commit(kArchiverGroup, 0, Offset{0}).ok());
  recalled.clear();
  run(hook);
  for (const auto& b : recalled) EXPECT_EQ(b, "with-attachments");
  EXPECT_EQ(bodies(), (std::vector<std::string>{"kept", ""}));
}

}  // namespace
}  // namespace qim
