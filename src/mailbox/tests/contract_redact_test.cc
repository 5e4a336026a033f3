// The mailbox half of a recall (docs/adr/0129) on every backend: MailboxStore::redact_message removes the
// recalled SEND's body from its recipients' entries so that the engine itself, read past the store, no
// longer holds it; the entries stay (id, sender, seq); nothing is created for a user who had none; and a
// replay of the SEND as fanout sends it after the recall (the original identity, no body) is a repeat,
// not a DispatchConflict, and brings no body back, in the same epoch or a later one.
#include "mailbox/redaction.h"
#include "mailbox/tests/contract_fixture.h"

namespace qim::test {
namespace {

constexpr uint64_t kSendId = 4000;
constexpr uint64_t kRecallId = 4001;
constexpr std::string_view kSecret = "the body that was recalled";

class RedactTest : public ContractTest {
 protected:
  // The SEND: alice to bob, its body kSecret, named as fanout names it.
  DispatchRecord send() {
    Message m = make_message(kSendId, alice_, clock_->now_ms());
    m.body = std::string(kSecret);
    return make_record(message_dispatch_id(MessageId{kSendId}, kShard, 0).str(), m, {{alice_, bob_}});
  }
  // The SEND as fanout replays it once recalled: the same identity (digest included), no body.
  DispatchRecord redacted_send() {
    DispatchRecord r = send();
    r.message.body.clear();
    return r;
  }
  // The recall entry, to alice, bob and carol (who joined after the SEND: she has no entry of it).
  DispatchRecord recall() {
    Message m = make_message(kRecallId, alice_, clock_->now_ms());
    m.client_msg_id = "~recall";
    m.body = R"({"event":"recall","message_id":")" + std::to_string(kSendId) + R"(","by":")" + alice_.str() +
             R"("})";
    return make_record(message_dispatch_id(MessageId{kRecallId}, kShard, 0).str(), m,
                       {{alice_, bob_, carol_}});
  }
  // The node's step for the recall: begin, write, redact, finish.
  void materialise_recall(uint64_t observed, MailboxSeq previous, Epoch epoch = kEpoch) {
    const DispatchRecord r = recall();
    auto begun = begin(r, observed, epoch);
    ASSERT_TRUE(is_ok(begun));
    if (begun->needs_entries) {
      ASSERT_TRUE(is_ok(write(r, {}, epoch)));
    }
    const std::vector<UserId> users = r.chunks[0];
    ASSERT_TRUE(is_ok(store().redact_message(kShard, epoch, MessageId{kSendId}, users)));
    ASSERT_TRUE(is_ok(finish(r, previous, observed, epoch)));
  }
  bool engine_holds_secret() {
    auto held = session_->engine_holds(kSecret);
    EXPECT_TRUE(is_ok(held));
    return held.ok() && *held;
  }
  // The SEND's entry in `user`'s mailbox (fails the test if absent).
  std::optional<MailboxEntry> send_entry(const UserId& user) {
    for (const auto& e : mailbox(user)) {
      if (e.message.id == MessageId{kSendId}) return e;
    }
    ADD_FAILURE() << user.str() << " has no entry of the SEND";
    return std::nullopt;
  }
};

TEST_P(RedactTest, ARecallLeavesNoBodyInTheEngineAndKeepsTheEntries) {
  ASSERT_TRUE(is_ok(materialise(send(), 10, MailboxSeq{})));
  ASSERT_TRUE(engine_holds_secret()) << "the check must see the body before the recall";
  materialise_recall(11, seq_of(1, 10));
  EXPECT_FALSE(engine_holds_secret());
  for (const UserId& u : {alice_, bob_}) {
    auto e = send_entry(u);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->seq, seq_of(1, 10));
    EXPECT_EQ(e->message.body, "");
    EXPECT_EQ(e->message.sender, alice_);
    EXPECT_EQ(e->message.client_msg_id, send().message.client_msg_id);
  }
  // carol had no entry of the SEND: none is created, she has the recall entry alone.
  auto carol = mailbox(carol_);
  ASSERT_EQ(carol.size(), 1u);
  EXPECT_EQ(carol[0].message.id, MessageId{kRecallId});
  // Idempotent: a replay of the recall (after a restart: nothing in flight) changes nothing.
  restart();
  materialise_recall(12, seq_of(1, 11));
  EXPECT_FALSE(engine_holds_secret());
  EXPECT_EQ(mailbox(bob_).size(), 2u);
}

TEST_P(RedactTest, AReplayOfTheRecalledSendIsARepeatAndBringsNoBodyBack) {
  ASSERT_TRUE(is_ok(materialise(send(), 10, MailboxSeq{})));
  materialise_recall(11, seq_of(1, 10));
  // Fanout replays from before the SEND: the redacted SEND, then the recall, at later offsets.
  restart();
  auto again = begin(redacted_send(), 20);
  ASSERT_TRUE(is_ok(again));  // not a DispatchConflict: the identity is the original one
  EXPECT_EQ(again->kind, BeginKind::kExisting);
  EXPECT_FALSE(again->needs_entries);
  ASSERT_TRUE(is_ok(finish(redacted_send(), seq_of(1, 11), 20)));
  materialise_recall(21, seq_of(1, 11));
  EXPECT_FALSE(engine_holds_secret());
  // A new owner (epoch 2) replays both: the SEND is new to epoch 2, so its entries are written again,
  // with no body; the recall redacts both epochs' entries.
  auto fresh = begin(redacted_send(), 30, Epoch{2});
  ASSERT_TRUE(is_ok(fresh));
  EXPECT_EQ(fresh->kind, BeginKind::kFresh);
  ASSERT_TRUE(is_ok(write(redacted_send(), {}, Epoch{2})));
  ASSERT_TRUE(is_ok(finish(redacted_send(), seq_of(1, 11), 30, Epoch{2})));
  materialise_recall(31, seq_of(2, 30), Epoch{2});
  EXPECT_FALSE(engine_holds_secret());
  for (const auto& e : mailbox(bob_)) EXPECT_EQ(e.message.body.find(kSecret), std::string::npos);
}

TEST_P(RedactTest, ARecallAtALaterEpochRedactsTheSendOfAnEarlierOne) {
  ASSERT_TRUE(is_ok(materialise(send(), 10, MailboxSeq{})));
  materialise_recall(11, seq_of(1, 10), Epoch{2});
  EXPECT_FALSE(engine_holds_secret());
  auto e = send_entry(bob_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->seq, seq_of(1, 10));
  EXPECT_EQ(e->message.body, "");
}

TEST_P(RedactTest, ARecallInTheSamePageAsItsSendFindsItInFlight) {
  // Both begun together (the identity writes may still be in flight on scylla), then written, redacted.
  const DispatchRecord s = send(), r = recall();
  const std::vector<BeginRequest> page = {{&s.identity, Offset{10}}, {&r.identity, Offset{11}}};
  auto begun = store().begin_dispatch_page(kShard, kEpoch, page);
  ASSERT_TRUE(is_ok(begun));
  std::vector<ChunkWrite> chunks = chunk_writes(s);
  for (auto& c : chunk_writes(r)) chunks.push_back(c);
  ASSERT_TRUE(is_ok(store().write_chunks(kShard, kEpoch, chunks)));
  ASSERT_TRUE(is_ok(store().redact_message(kShard, kEpoch, MessageId{kSendId}, r.chunks[0])));
  ASSERT_TRUE(is_ok(finish(s, MailboxSeq{}, 10)));
  ASSERT_TRUE(is_ok(finish(r, seq_of(1, 10), 11)));
  EXPECT_FALSE(engine_holds_secret());
}

TEST_P(RedactTest, RefusesAUserOfAnotherShard) {
  ASSERT_TRUE(is_ok(materialise(send(), 10, MailboxSeq{})));
  const std::vector<UserId> users = {bob_, stranger_};
  EXPECT_TRUE(
      fails_with(store().redact_message(kShard, kEpoch, MessageId{kSendId}, users), Errc::kInvalidArgument));
  EXPECT_TRUE(engine_holds_secret());  // nothing was redacted
}

TEST(RecallTarget, ReadsOnlyARecallEntrysTarget) {
  Message m;
  m.client_msg_id = "~recall";
  m.body = R"({"event":"recall","message_id":"281474976710657","by":"alice"})";
  EXPECT_EQ(recall_target_of(m), MessageId{281474976710657});
  m.client_msg_id = "~edit";
  EXPECT_EQ(recall_target_of(m), std::nullopt);
  m.client_msg_id = "~recall";
  for (const char* bad : {R"({"event":"recall","message_id":"","by":"a"})", R"({"event":"recall"})",
                          R"({"event":"recall","message_id":"12x"})", "recall 12"}) {
    m.body = bad;
    EXPECT_EQ(recall_target_of(m), std::nullopt) << bad;
  }
  EXPECT_EQ(message_dispatch_id(MessageId{7}, ShardId{3}, 0).str(), "m7-s3");
  EXPECT_EQ(message_dispatch_id(MessageId{7}, ShardId{3}, 2).str(), "m7-s3-p2");
}

INSTANTIATE_TEST_SUITE_P(Backends, RedactTest, ::testing::ValuesIn(contract_backends()), fixture_name);

}  // namespace
}  // namespace qim::test
