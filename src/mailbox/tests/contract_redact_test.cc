// The mailbox half of a recall (docs/adr/0129) on every backend: MailboxStore::redact_message removes the
// recalled SEND's body from its recipients' entries so that the engine itself, read past the store, no
// longer holds it; the entries stay (id, sender, seq); nothing is created for a user who had none; and a
// replay of the SEND as fanout sends it after the recall (the original identity, no body) is a repeat,
// not a DispatchConflict, and brings no body back, in the same epoch or a later one.
#include <algorithm>

#include "mailbox/redaction.h"
#include "mailbox/tests/contract_fixture.h"

namespace qim::test {
namespace {

constexpr uint64_t kSendId = 4000;
constexpr uint64_t kRecallId = 4001;
constexpr std::string_view kSecret = "the body that was recalled";
// Two edits of the SEND (decision 157): their ~edit entries carry the edited text until the recall.
constexpr uint64_t kEditIds[] = {4002, 4003};
// As they stand in the entry's JSON (the second escaped).
constexpr std::string_view kEditTexts[] = {"first edited text", R"(second edited \"text\")"};
// The recall naming the edits (a recall of the same id naming none, as before decision 157, would be
// another dispatch of the same identity: a DispatchConflict).
constexpr uint64_t kRecallWithEditsId = 4005;

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
  // The JSON of edit `n`'s ~edit entry, with `text` as fanout writes it (lifecycle/message_state.h).
  static std::string edit_body(size_t n, std::string_view text) {
    return R"({"event":"edit","message_id":")" + std::to_string(kSendId) + R"(","body":")" +
           std::string(text) + R"(","edited_at":)" + std::to_string(1000 + n) + R"(,"edit_count":)" +
           std::to_string(n + 1) + "}";
  }
  // Edit `n` of the SEND: its ~edit entry to alice and bob, named as fanout names it.
  DispatchRecord edit(size_t n) {
    Message m = make_message(kEditIds[n], alice_, clock_->now_ms());
    m.client_msg_id = "~edit";
    m.body = edit_body(n, kEditTexts[n]);
    return make_record(message_dispatch_id(MessageId{kEditIds[n]}, kShard, 0).str(), m, {{alice_, bob_}});
  }
  // The recall entry, to alice, bob and carol (who joined after the SEND: she has no entry of it); with
  // `edits`, it names the two edits as fanout names the applied edits before a recall.
  DispatchRecord recall(bool edits = false) {
    const uint64_t id = edits ? kRecallWithEditsId : kRecallId;
    Message m = make_message(id, alice_, clock_->now_ms());
    m.client_msg_id = "~recall";
    m.body = R"({"event":"recall","message_id":")" + std::to_string(kSendId) + R"(","by":")" + alice_.str() +
             (edits ? R"(","edits":[")" + std::to_string(kEditIds[0]) + R"(",")" +
                          std::to_string(kEditIds[1]) + R"("]})"
                    : R"("})");
    return make_record(message_dispatch_id(MessageId{id}, kShard, 0).str(), m, {{alice_, bob_, carol_}});
  }
  // The node's step for the recall: begin, write, redact (what the entry names), finish.
  void materialise_recall(uint64_t observed, MailboxSeq previous, Epoch epoch = kEpoch, bool edits = false) {
    const DispatchRecord r = recall(edits);
    auto begun = begin(r, observed, epoch);
    ASSERT_TRUE(is_ok(begun));
    if (begun->needs_entries) {
      ASSERT_TRUE(is_ok(write(r, {}, epoch)));
    }
    const std::vector<UserId> users = r.chunks[0];
    const std::optional<RecallEntry> named = recall_of(r.message);
    ASSERT_TRUE(named);
    ASSERT_TRUE(is_ok(store().redact_message(kShard, epoch, *named, users)));
    ASSERT_TRUE(is_ok(finish(r, previous, observed, epoch)));
  }
  bool engine_holds(std::string_view bytes) {
    auto held = session_->engine_holds(bytes);
    EXPECT_TRUE(is_ok(held));
    return held.ok() && *held;
  }
  bool engine_holds_secret() { return engine_holds(kSecret); }
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

// docs/adr/0164: where a write carries its writer's clock (CQL), the SEND's entry may have been written by
// a writer whose clock is ahead of the recall's (a lease moved between two machines, or two coordinators):
// the recall still removes its body, whatever clock it runs on.
TEST_P(RedactTest, ARecallRemovesABodyWrittenByAWriterWhoseClockIsAhead) {
  SKIP_IF_LIMITED(no_writer_clock);
  ASSERT_TRUE(is_ok(materialise(send(), 10, MailboxSeq{})));
  for (const UserId& u : {alice_, bob_}) {
    ASSERT_TRUE(is_ok(session_->write_body_ahead(u, seq_of(1, 10), kSecret)));
  }
  ASSERT_TRUE(engine_holds_secret()) << "the check must see the body before the recall";
  materialise_recall(11, seq_of(1, 10));
  EXPECT_FALSE(engine_holds_secret());
  for (const UserId& u : {alice_, bob_}) {
    auto e = send_entry(u);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->message.body, "") << u.str();
    EXPECT_EQ(e->message.sender, alice_) << u.str();
  }
  EXPECT_EQ(mailbox(carol_).size(), 1u) << "carol had no entry of the SEND: none is created";
  // Idempotent: the recall replayed after a restart finds no body left and changes nothing.
  restart();
  materialise_recall(12, seq_of(1, 11));
  EXPECT_FALSE(engine_holds_secret());
  EXPECT_EQ(mailbox(bob_).size(), 2u);  // the SEND and its recall entry
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
  ASSERT_TRUE(
      is_ok(store().redact_message(kShard, kEpoch, RecallEntry{MessageId{kSendId}, {}}, r.chunks[0])));
  ASSERT_TRUE(is_ok(finish(s, MailboxSeq{}, 10)));
  ASSERT_TRUE(is_ok(finish(r, seq_of(1, 10), 11)));
  EXPECT_FALSE(engine_holds_secret());
}

// Decision 157: the ~edit entries of the recalled message's edits lose their text too, in the engine
// itself; each stays, with its JSON (id, time, count) and "body":"", the bytes fanout dispatches for that
// edit read again after the recall. A recall naming no edits (written before decision 157) leaves them.
TEST_P(RedactTest, ARecallLeavesNoEditedTextInTheEngineAndKeepsTheEditEntries) {
  ASSERT_TRUE(is_ok(materialise(send(), 10, MailboxSeq{})));
  ASSERT_TRUE(is_ok(materialise(edit(0), 11, seq_of(1, 10))));
  ASSERT_TRUE(is_ok(materialise(edit(1), 12, seq_of(1, 11))));
  for (size_t n = 0; n < 2; ++n) {
    ASSERT_TRUE(engine_holds(edit_body(n, kEditTexts[n]))) << "the check must see the edit before the recall";
  }
  materialise_recall(13, seq_of(1, 12), kEpoch, /*edits=*/false);  // an older recall: names no edit
  EXPECT_FALSE(engine_holds_secret());
  EXPECT_TRUE(engine_holds(kEditTexts[0]));
  materialise_recall(14, seq_of(1, 13), kEpoch, /*edits=*/true);
  EXPECT_FALSE(engine_holds_secret());
  for (size_t n = 0; n < 2; ++n) {
    EXPECT_FALSE(engine_holds(kEditTexts[n])) << n;
    EXPECT_TRUE(engine_holds(edit_body(n, ""))) << "the edit entry's JSON stays, " << n;
  }
  for (const UserId& u : {alice_, bob_}) {
    std::vector<std::string> bodies;
    for (const auto& e : mailbox(u)) {
      if (e.message.client_msg_id == "~edit") bodies.push_back(e.message.body);
    }
    EXPECT_EQ(bodies, (std::vector<std::string>{edit_body(0, ""), edit_body(1, "")})) << u.str();
  }
  // Idempotent, after a restart and at a later epoch: the edits' entries of epoch 1 are found again.
  restart();
  materialise_recall(15, seq_of(1, 14), Epoch{2}, /*edits=*/true);
  for (size_t n = 0; n < 2; ++n) EXPECT_FALSE(engine_holds(kEditTexts[n])) << n;
  EXPECT_EQ(mailbox(bob_).size(), 6u);  // the SEND, two edits, three recall entries
}

// Decision 160: a member removed between the SEND and its recall gets no recall entry; the recall's record
// of their shard names them as former recipients and the node redacts their entries with the others'.
// Where the recall has no recipient left in the shard that record has no chunk (an empty manifest): it is
// begun and finished as any other, writes no entry, and a replay of it is a repeat.
TEST_P(RedactTest, ARecallOfFormerRecipientsOnlyRedactsTheirEntriesAndWritesThemNone) {
  ASSERT_TRUE(is_ok(materialise(send(), 10, MailboxSeq{})));
  ASSERT_TRUE(is_ok(materialise(edit(0), 11, seq_of(1, 10))));
  DispatchRecord r = recall(/*edits=*/true);
  r.chunks.clear();
  r.former_recipients = {alice_, bob_};
  std::sort(r.former_recipients.begin(), r.former_recipients.end());
  r.identity = make_identity(r.identity.id, r.message, r.chunks, r.former_recipients);
  auto begun = begin(r, 12);
  ASSERT_TRUE(is_ok(begun));
  EXPECT_EQ(begun->kind, BeginKind::kFresh);
  const std::optional<RecallEntry> named = recall_of(r.message);
  ASSERT_TRUE(named);
  ASSERT_TRUE(is_ok(store().redact_message(kShard, kEpoch, *named, r.former_recipients)));
  ASSERT_TRUE(is_ok(finish(r, seq_of(1, 11), 12)));
  EXPECT_EQ(frontier(), seq_of(1, 12));
  EXPECT_FALSE(engine_holds_secret());
  EXPECT_FALSE(engine_holds(kEditTexts[0]));
  for (const UserId& u : {alice_, bob_}) {
    const auto entries = mailbox(u);
    ASSERT_EQ(entries.size(), 2u) << u.str() << ": the SEND and the edit, no recall entry";
    EXPECT_EQ(entries[0].message.body, "") << u.str();
    EXPECT_EQ(entries[1].message.body, edit_body(0, "")) << u.str();
  }
  EXPECT_TRUE(mailbox(carol_).empty()) << "nothing is written for anyone";
  // Fanout replays the recall (after a restart: nothing in flight): the same identity, a repeat.
  restart();
  auto again = begin(r, 13);
  ASSERT_TRUE(is_ok(again));
  EXPECT_EQ(again->kind, BeginKind::kExisting);
  EXPECT_FALSE(again->needs_entries);
  ASSERT_TRUE(is_ok(store().redact_message(kShard, kEpoch, *named, r.former_recipients)));
  ASSERT_TRUE(is_ok(finish(r, seq_of(1, 12), 13)));
  EXPECT_EQ(mailbox(bob_).size(), 2u);
  EXPECT_FALSE(engine_holds_secret());
}

TEST_P(RedactTest, RefusesAUserOfAnotherShard) {
  ASSERT_TRUE(is_ok(materialise(send(), 10, MailboxSeq{})));
  const std::vector<UserId> users = {bob_, stranger_};
  EXPECT_TRUE(fails_with(store().redact_message(kShard, kEpoch, RecallEntry{MessageId{kSendId}, {}}, users),
                         Errc::kInvalidArgument));
  EXPECT_TRUE(engine_holds_secret());  // nothing was redacted
}

TEST(RecallTarget, ReadsOnlyARecallEntrysTargetAndEdits) {
  Message m;
  m.client_msg_id = "~recall";
  m.body = R"({"event":"recall","message_id":"281474976710657","by":"alice"})";
  EXPECT_EQ(recall_of(m), (RecallEntry{MessageId{281474976710657}, {}}));
  m.body =
      R"({"event":"recall","message_id":"281474976710657","by":"alice","edits":["5","281474976710659"]})";
  EXPECT_EQ(recall_of(m),
            (RecallEntry{MessageId{281474976710657}, {MessageId{5}, MessageId{281474976710659}}}));
  m.client_msg_id = "~edit";
  EXPECT_EQ(recall_of(m), std::nullopt);
  m.client_msg_id = "~recall";
  for (const char* bad : {R"({"event":"recall","message_id":"","by":"a"})", R"({"event":"recall"})",
                          R"({"event":"recall","message_id":"12x"})", "recall 12",
                          R"({"event":"recall","message_id":"12","by":"a","edits":[]})",
                          R"({"event":"recall","message_id":"12","by":"a","edits":["5",]})",
                          R"({"event":"recall","message_id":"12","by":"a","edits":["5"})"}) {
    m.body = bad;
    EXPECT_EQ(recall_of(m), std::nullopt) << bad;
  }
  EXPECT_EQ(message_dispatch_id(MessageId{7}, ShardId{3}, 0).str(), "m7-s3");
  EXPECT_EQ(message_dispatch_id(MessageId{7}, ShardId{3}, 2).str(), "m7-s3-p2");
}

TEST(RedactedEditBody, KeepsTheJsonWithoutTheText) {
  const MessageId target{12};
  EXPECT_EQ(redacted_edit_body(
                target, "~edit",
                R"({"event":"edit","message_id":"12","body":"say \"hi\" \\","edited_at":5,"edit_count":2})"),
            R"({"event":"edit","message_id":"12","body":"","edited_at":5,"edit_count":2})");
  const std::string done = R"({"event":"edit","message_id":"12","body":"","edited_at":5,"edit_count":2})";
  EXPECT_EQ(redacted_edit_body(target, "~edit", done), std::nullopt);  // nothing left to remove
  EXPECT_EQ(
      redacted_edit_body(MessageId{13}, "~edit",
                         R"({"event":"edit","message_id":"12","body":"x","edited_at":5,"edit_count":2})"),
      std::nullopt);  // another message's edit
  EXPECT_EQ(
      redacted_edit_body(target, "c1",
                         R"({"event":"edit","message_id":"12","body":"x","edited_at":5,"edit_count":2})"),
      std::nullopt);  // a client's own message
  EXPECT_EQ(redacted_edit_body(target, "~edit", R"({"event":"edit","message_id":"12","body":"x)"),
            std::nullopt);
}

INSTANTIATE_TEST_SUITE_P(Backends, RedactTest, ::testing::ValuesIn(contract_backends()), fixture_name);

}  // namespace
}  // namespace qim::test
