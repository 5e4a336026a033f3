// HISTORY serves an edited message's current body (docs/adr/0155): the marks come from the message state
// fanout writes, the body from the last edit's own Outbox record, so a reader right after an EDIT_ACK never
// sees the new edit count beside the old body the archiver has not yet rewritten.
#include <gtest/gtest.h>

#include "gateway/message_event_requests.h"
#include "gateway/tests/fake_log.h"
#include "outbox/outbox_record.h"

namespace qim {
namespace {

const ConversationId kConv = *ConversationId::parse("d:alice:bob");

uint64_t append(testing::FakeLog& log, const OutboxRecord& r) {
  uint64_t at = 0;
  log.append(0, kConv.str(), encode_outbox_record(r), [&](Result<Offset> o) { at = o->value; });
  return at;
}

OutboxRecord send_record(const std::string& body) {
  OutboxRecord r;
  r.conversation = kConv;
  r.sender = *UserId::parse("alice");
  r.client_msg_id = "c1";
  r.server_time_ms = 1000;
  r.body = body;
  return r;
}

OutboxRecord edit_record(MessageId target, const std::string& body) {
  OutboxRecord r = send_record(body);
  r.client_msg_id = "e-" + body;
  r.event = MessageEvent{MessageEventKind::kEdit, target};
  return r;
}

// The state fanout writes once it decided the edits at `edits`.
MessageState edited(MessageId id, std::initializer_list<uint64_t> edits) {
  MessageState s;
  s.id = id;
  s.conversation = kConv;
  s.sender = *UserId::parse("alice");
  for (uint64_t at : edits)
    s.events[at] = EventOutcome{MessageEventKind::kEdit, true, {}, s.sender, 2000, {}};
  return s;
}

struct Fixture {
  testing::FakeLog log{1};
  std::unique_ptr<MessageStateStore> states = make_memory_message_state_store();
  HistoryPage page;

  explicit Fixture(const std::string& row_body) {
    const MessageId id = message_id_of(0, Offset{append(log, send_record("helo"))});
    Message m;
    m.id = id;
    m.conversation = kConv;
    m.sender = *UserId::parse("alice");
    m.body = row_body;  // what the archiver wrote so far
    page.messages.push_back(m);
  }
  MessageId id() const { return page.messages[0].id; }
};

TEST(HistoryEdits, TheLastEditsBodyIsServedBeforeTheArchiverRewritesTheRow) {
  Fixture f("helo");
  const uint64_t first = append(f.log, edit_record(f.id(), "hello"));
  const uint64_t second = append(f.log, edit_record(f.id(), "hello, world"));
  ASSERT_TRUE(f.states->put(edited(f.id(), {first, second}), 0, second).ok());
  ASSERT_TRUE(annotate_history_page(*f.states, f.page, std::nullopt, &f.log).ok());
  EXPECT_EQ(f.page.messages[0].body, "hello, world");
  ASSERT_TRUE(f.page.life.count(f.id().value));
  EXPECT_EQ(f.page.life.at(f.id().value).edit_count, 2u);
}

TEST(HistoryEdits, WithoutTheOutboxOrItsRecordTheRowsBodyIsServed) {
  Fixture f("hello");  // the archiver got there
  const uint64_t edit = append(f.log, edit_record(f.id(), "hello"));
  ASSERT_TRUE(f.states->put(edited(f.id(), {edit}), 0, edit).ok());
  HistoryPage page = f.page;
  ASSERT_TRUE(annotate_history_page(*f.states, page, std::nullopt, nullptr).ok());
  EXPECT_EQ(page.messages[0].body, "hello");
  // A state naming an offset the log does not hold (removed by retention, or past its end).
  ASSERT_TRUE(f.states->put(edited(f.id(), {edit + 5}), 0, edit + 5).ok());
  page = f.page;
  ASSERT_TRUE(annotate_history_page(*f.states, page, std::nullopt, &f.log).ok());
  EXPECT_EQ(page.messages[0].body, "hello");
}

TEST(HistoryEdits, ARecordAtTheEditsOffsetThatIsNotThatEditIsNotServed) {
  Fixture f("helo");
  const uint64_t other = append(f.log, send_record("not an edit"));
  ASSERT_TRUE(f.states->put(edited(f.id(), {other}), 0, other).ok());
  ASSERT_TRUE(annotate_history_page(*f.states, f.page, std::nullopt, &f.log).ok());
  EXPECT_EQ(f.page.messages[0].body, "helo");
}

}  // namespace
}  // namespace qim
