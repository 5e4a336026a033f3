#include "webhooks/webhook_consumer.h"

#include <gtest/gtest.h>

#include <deque>
#include <thread>

#include "core/conversation.h"
#include "groups/embedded/rocks_group_store.h"
#include "log/testing/temp_dir.h"
#include "log/testing/test_log.h"
#include "webhooks/signature.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

// A hook in memory: records every request; answers from a script of failures (true: fail), then 2xx.
struct FakeHook {
  std::mutex mu;
  std::vector<SignedDelivery> got;       // every request, failed ones included
  std::vector<SignedDelivery> accepted;  // the acknowledged ones
  std::deque<bool> fail_next;
  bool down = false;

  size_t accepted_count() {
    std::lock_guard l(mu);
    return accepted.size();
  }
  size_t request_count() {
    std::lock_guard l(mu);
    return got.size();
  }
};

class FakeSender final : public HookSender {
 public:
  explicit FakeSender(FakeHook& hook) : hook_(hook) {}
  Status deliver(const SignedDelivery& d) override {
    std::lock_guard l(hook_.mu);
    hook_.got.push_back(d);
    bool fail = hook_.down;
    if (!hook_.fail_next.empty()) {
      fail = hook_.fail_next.front();
      hook_.fail_next.pop_front();
    }
    if (fail) return Error(Errc::kTransport, "the hook answered 503");
    hook_.accepted.push_back(d);
    return {};
  }

 private:
  FakeHook& hook_;
};

template <typename Pred>
bool eventually(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(2ms);
  }
  return pred();
}

class WebhookConsumerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    outbox_ = testing::open_test_log(dir_.sub("outbox"), 1, "outbox");
    dead_ = testing::open_test_log(dir_.sub("dead"), 1, "dead");
  }

  void send(const std::string& body) {
    OutboxRecord r;
    r.sender = UserId::parse("alice").value();
    r.sender_device = DeviceId::parse("d1").value();
    r.conversation = direct_conversation(r.sender, UserId::parse("bob").value()).value();
    r.server_time_ms = 1'700'000'000'000;
    r.body = body;
    ASSERT_TRUE(outbox_->append_sync(0, "", encode_outbox_record(r)).ok());
  }

  std::unique_ptr<WebhookConsumer> consumer(RetryPolicy retry = {}) {
    WebhookConsumerOptions o;
    o.key = key_;
    o.retry = retry;
    o.poll_wait = 20ms;
    o.clock = clock_;
    // The fake clock moves by each pause; the pauses are recorded, the thread only yields.
    o.sleep = [this](std::chrono::milliseconds d) {
      {
        std::lock_guard l(pauses_mu_);
        pauses_.push_back(d.count());
      }
      clock_->advance_ms(d.count());
      std::this_thread::sleep_for(1ms);
    };
    return std::make_unique<WebhookConsumer>(
        *outbox_, *dead_, nullptr, [this] { return std::make_unique<FakeSender>(hook_); }, o);
  }

  std::vector<std::string> bodies(const std::vector<SignedDelivery>& ds) {
    std::vector<std::string> out;
    for (const auto& d : ds) {
      const auto at = d.body.find(R"("body":")");
      out.push_back(d.body.substr(at + 8, d.body.find('"', at + 8) - at - 8));
    }
    return out;
  }

  testing::TempDir dir_;
  std::unique_ptr<EmbeddedLog> outbox_, dead_;
  std::string key_ = decode_webhook_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").value();
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(1'700'000'000'000);
  FakeHook hook_;
  std::mutex pauses_mu_;
  std::vector<int64_t> pauses_;
};

TEST_F(WebhookConsumerTest, SendsEachEventInOrderSignedAndCommitsAfterTheAcknowledgement) {
  for (int i = 0; i < 5; ++i) send("m" + std::to_string(i));
  auto c = consumer();
  ASSERT_TRUE(c->start().ok());
  ASSERT_TRUE(eventually([&] { return hook_.accepted_count() == 5; }));
  c->stop();
  EXPECT_EQ(bodies(hook_.accepted), (std::vector<std::string>{"m0", "m1", "m2", "m3", "m4"}));
  for (const auto& d : hook_.accepted) {
    EXPECT_EQ(d.signature, webhook_signature(key_, d.id, d.timestamp, d.body));
    EXPECT_EQ(d.timestamp, clock_->now_ms() / 1000);
  }
  EXPECT_EQ(outbox_->committed(kWebhookGroup, 0).value(), Offset{5});
  EXPECT_EQ(c->metrics().delivered, 5u);
}

TEST_F(WebhookConsumerTest, RetriesWithBackOffThenDeliversOnceAndKeepsTheOrder) {
  send("first");
  send("second");
  hook_.fail_next = {true, true, true};
  auto c = consumer();
  ASSERT_TRUE(c->start().ok());
  ASSERT_TRUE(eventually([&] { return hook_.accepted_count() == 2; }));
  c->stop();
  EXPECT_EQ(bodies(hook_.accepted), (std::vector<std::string>{"first", "second"}));
  EXPECT_EQ(hook_.request_count(), 5u);
  // The same id on every attempt, a fresh timestamp and signature each time.
  EXPECT_EQ(hook_.got[0].id, hook_.got[3].id);
  EXPECT_NE(hook_.got[0].timestamp, hook_.got[3].timestamp);
  EXPECT_EQ(pauses_, (std::vector<int64_t>{1000, 2000, 4000}));
  EXPECT_EQ(c->metrics().failed_attempts, 3u);
  EXPECT_EQ(c->metrics().dead_lettered, 0u);
}

TEST_F(WebhookConsumerTest, AnEventPastItsRetryTimeIsDeadLetteredThenReplayedWithItsId) {
  send("lost");
  send("after");
  // Attempts at 0, 1, 3, 7 and 10 s of fake time fail: "lost" is given up after 10 s; "after" goes through.
  hook_.fail_next = {true, true, true, true, true};
  auto c = consumer(RetryPolicy{1000ms, 4000ms, 10'000ms});
  ASSERT_TRUE(c->start().ok());
  ASSERT_TRUE(eventually([&] { return hook_.accepted_count() >= 1; }));
  c->stop();
  EXPECT_EQ(bodies(hook_.accepted)[0], "after");
  // 1 + 2 + 4 + 3 s of pauses: the last attempt at 10 s, then the dead letter.
  EXPECT_EQ(pauses_, (std::vector<int64_t>{1000, 2000, 4000, 3000}));
  EXPECT_EQ(c->metrics().dead_lettered, 1u);
  const std::string lost_id = hook_.got[0].id;

  auto listed = c->list_dead_letters();
  ASSERT_TRUE(listed.ok());
  EXPECT_NE(listed->find("0 " + lost_id + " message.created attempts=5"), std::string::npos) << *listed;
  EXPECT_NE(listed->find("pending"), std::string::npos) << *listed;

  auto replay = c->replay_dead_letters(std::nullopt);
  ASSERT_TRUE(replay.ok()) << replay.error().to_string();
  EXPECT_EQ(replay->replayed, 1u);
  EXPECT_EQ(replay->pending, 0u);
  EXPECT_EQ(replay->cursor, 1u);
  EXPECT_EQ(hook_.accepted.back().id, lost_id);
  EXPECT_EQ(bodies({hook_.accepted.back()})[0], "lost");
  EXPECT_EQ(c->replay_dead_letters(std::nullopt)->replayed, 0u);  // the cursor moved past it
  EXPECT_NE(c->list_dead_letters()->find("replayed"), std::string::npos);
}

TEST_F(WebhookConsumerTest, ARestartResendsOnlyWhatWasNotAcknowledged) {
  send("a");
  send("b");
  const RetryPolicy forever{1000ms, 4000ms, 0ms};  // never dead-lettered: "c" stays unacknowledged
  {
    auto c = consumer(forever);
    ASSERT_TRUE(c->start().ok());
    ASSERT_TRUE(eventually([&] { return hook_.accepted_count() == 2; }));
    // Down: "c" is tried and not acknowledged when the consumer stops.
    {
      std::lock_guard l(hook_.mu);
      hook_.down = true;
    }
    send("c");
    ASSERT_TRUE(eventually([&] { return hook_.request_count() >= 4; }));
    c->stop();
  }
  {
    std::lock_guard l(hook_.mu);
    hook_.down = false;
  }
  send("d");
  auto c = consumer(forever);
  ASSERT_TRUE(c->start().ok());
  ASSERT_TRUE(eventually([&] { return hook_.accepted_count() == 4; }));
  c->stop();
  EXPECT_EQ(bodies(hook_.accepted), (std::vector<std::string>{"a", "b", "c", "d"}));
}

// Group changes and group messages become events only as fanout decided them: here the test plays fanout,
// applying each op to a group store at its offset, as fanout does before it commits.
TEST_F(WebhookConsumerTest, RefusedGroupChangesAndMessagesOfNonMembersMakeNoEvent) {
  auto store = RocksGroupStore::open(dir_.sub("groups")).value();
  const GroupId group = GroupId::parse("team1").value();
  const ConversationId conv = Conversation::group(group).value().id();
  GroupState state(group);
  auto append = [&](const std::string& from, std::optional<GroupOp> op, const std::string& body) {
    OutboxRecord r;
    r.sender = UserId::parse(from).value();
    r.sender_device = DeviceId::parse("d1").value();
    r.conversation = conv;
    r.server_time_ms = 1'700'000'000'000;
    r.body = body;
    r.group_op = op;
    if (op) r.client_msg_id = "~group:op";
    const Offset at = outbox_->append_sync(0, "", encode_outbox_record(r)).value();
    if (op) {
      ASSERT_TRUE(store->apply(state.apply(*op, r.sender, at.value, 100)).ok());
    }
  };
  append("alice", GroupOp{GroupOpKind::kCreate, {UserId::parse("bob").value()}, "team"}, "{}");
  append("bob", GroupOp{GroupOpKind::kAdd, {UserId::parse("carol").value()}}, "{}");  // bob is no admin
  append("carol", std::nullopt, "from a non-member");
  append("bob", std::nullopt, "from a member");

  WebhookConsumerOptions o;
  o.key = key_;
  o.poll_wait = 20ms;
  WebhookConsumer c(
      *outbox_, *dead_, store.get(), [this] { return std::make_unique<FakeSender>(hook_); }, o);
  ASSERT_TRUE(c.start().ok());
  ASSERT_TRUE(eventually([&] { return c.metrics().records == 4; }));
  ASSERT_TRUE(eventually([&] { return c.metrics().partitions[0].next == 4; }));
  c.stop();
  ASSERT_EQ(hook_.accepted.size(), 2u);
  EXPECT_NE(hook_.accepted[0].body.find(R"("type":"group.created")"), std::string::npos)
      << hook_.accepted[0].body;
  EXPECT_NE(hook_.accepted[1].body.find(R"("body":"from a member")"), std::string::npos)
      << hook_.accepted[1].body;
}

TEST_F(WebhookConsumerTest, AppliedEditsAndRecallsAreEventsAndRefusedOnesAreNot) {
  auto messages = make_memory_message_state_store();
  auto append = [&](const std::string& body, std::optional<MessageEvent> event) {
    OutboxRecord r;
    r.sender = UserId::parse("alice").value();
    r.sender_device = DeviceId::parse("d1").value();
    r.conversation = direct_conversation(r.sender, UserId::parse("bob").value()).value();
    r.server_time_ms = 1'700'000'000'000;
    r.client_msg_id = event ? "~event" : "c" + body;
    r.body = body;
    r.event = event;
    return outbox_->append_sync(0, "", encode_outbox_record(r)).value();
  };
  const Offset sent = append("hello", std::nullopt);
  const MessageId target = message_id_of(0, sent);
  const Offset edit = append("hello, edited", MessageEvent{MessageEventKind::kEdit, target});
  const Offset refused = append("too late", MessageEvent{MessageEventKind::kEdit, target});
  const Offset recall = append("", MessageEvent{MessageEventKind::kRecall, target});
  // Fanout's decisions, as it records them.
  MessageState state;
  state.id = target;
  state.conversation = *ConversationId::parse("d:alice:bob");
  state.sender = UserId::parse("alice").value();
  state.events[edit.value] =
      EventOutcome{MessageEventKind::kEdit, true, EventRefusal::kNone, state.sender, 1};
  state.events[refused.value] =
      EventOutcome{MessageEventKind::kEdit, false, EventRefusal::kPastWindow, state.sender, 2};
  state.events[recall.value] =
      EventOutcome{MessageEventKind::kRecall, true, EventRefusal::kNone, state.sender, 3};
  ASSERT_TRUE(messages->put(state, 0, recall.value).ok());

  WebhookConsumerOptions o;
  o.key = key_;
  o.poll_wait = 20ms;
  o.messages = messages.get();
  WebhookConsumer c(
      *outbox_, *dead_, nullptr, [this] { return std::make_unique<FakeSender>(hook_); }, o);
  ASSERT_TRUE(c.start().ok());
  ASSERT_TRUE(eventually([&] { return c.metrics().partitions[0].next == 4; }));
  c.stop();
  ASSERT_EQ(hook_.accepted.size(), 3u);
  EXPECT_NE(hook_.accepted[0].body.find(R"("type":"message.created")"), std::string::npos);
  const std::string target_text = R"("message_id":")" + std::to_string(target.value) + R"(")";
  EXPECT_NE(hook_.accepted[1].body.find(R"("type":"message.edited")"), std::string::npos)
      << hook_.accepted[1].body;
  EXPECT_NE(hook_.accepted[1].body.find(target_text), std::string::npos) << hook_.accepted[1].body;
  EXPECT_NE(hook_.accepted[1].body.find(R"("body":"hello, edited")"), std::string::npos);
  EXPECT_NE(hook_.accepted[2].body.find(R"("type":"message.recalled")"), std::string::npos)
      << hook_.accepted[2].body;
  EXPECT_NE(hook_.accepted[2].body.find(target_text), std::string::npos);
  EXPECT_EQ(hook_.accepted[2].body.find(R"("body")"), std::string::npos) << "a recall carries no body";
}

}  // namespace
}  // namespace qim
