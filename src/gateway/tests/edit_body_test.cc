// The body an EDIT appends (gateway/message_event_requests.h edit_body; docs/adr/0152, 0162): an edit changes
// the caption of a message with attachments and keeps the files, whether the message's SEND is still in the
// Outbox or only in the history (the Outbox's retention passed); a text message's edit is its text.
#include <gtest/gtest.h>

#include <map>

#include "attachments/message_body.h"
#include "gateway/message_event_requests.h"
#include "gateway/tests/fake_log.h"
#include "outbox/outbox_record.h"

namespace qim {
namespace {

const ConversationId kConv = *ConversationId::parse("d:alice:bob");

std::string files_body(const std::string& caption) {
  attachments::StoredAttachment a;
  a.ref = attachments::AttachmentRef{"a1.x.y", "cat.png", "image/png", 5, std::nullopt};
  a.kind = "image";
  return attachments::encode_message_body(attachments::MessageBody{caption, {a}});
}

uint64_t append_send(testing::FakeLog& log, const std::string& body) {
  OutboxRecord r;
  r.conversation = kConv;
  r.sender = *UserId::parse("alice");
  r.client_msg_id = "c-" + std::to_string(log.total_records());
  r.server_time_ms = 1000;
  r.body = body;
  uint64_t at = 0;
  log.append(0, kConv.str(), encode_outbox_record(r), [&](Result<Offset> o) { at = o->value; });
  return at;
}

// The history rows by id (one conversation).
class Rows final : public HistoryStore {
 public:
  Status append(const Message& m) override {
    rows_[m.id.value] = m;
    return {};
  }
  Result<HistoryPage> read(const HistoryQuery& q) override {
    HistoryPage page;
    for (auto it = rows_.rbegin(); it != rows_.rend() && page.messages.size() < q.limit; ++it)
      if (!q.before || it->first < q.before->value) page.messages.push_back(it->second);
    return page;
  }
  OpCounts op_counts() const override { return {}; }

 private:
  std::map<uint64_t, Message> rows_;
};

TEST(EditBody, AnEditOfAMessageWithAttachmentsKeepsThemFromTheOutbox) {
  testing::FakeLog log{1};
  const MessageId id = message_id_of(0, Offset{append_send(log, files_body("old"))});
  auto body = edit_body(log, nullptr, kConv, id, 0, "new caption");
  ASSERT_TRUE(body.ok()) << body.error().to_string();
  EXPECT_EQ(*body, files_body("new caption"));
  // A text message's edit is the new text.
  const MessageId text = message_id_of(0, Offset{append_send(log, "helo")});
  EXPECT_EQ(*edit_body(log, nullptr, kConv, text, 0, "hello"), "hello");
}

TEST(EditBody, PastTheOutboxsRetentionTheHistoryRowKeepsTheAttachments) {
  testing::FakeLog log{1};  // empty: the SEND is no longer kept
  const MessageId id = message_id_of(0, Offset{41});
  Rows history;
  Message row;
  row.id = id;
  row.conversation = kConv;
  row.sender = *UserId::parse("alice");
  row.body = files_body("an earlier edit's caption");
  ASSERT_TRUE(history.append(row).ok());
  Message later = row;
  later.id = message_id_of(0, Offset{42});
  later.body = "a later message";
  ASSERT_TRUE(history.append(later).ok());
  auto body = edit_body(log, &history, kConv, id, 0, "new caption");
  ASSERT_TRUE(body.ok()) << body.error().to_string();
  EXPECT_EQ(*body, files_body("new caption"));
  // Without the history, or a message neither holds: the text alone (nothing shows files to keep).
  EXPECT_EQ(*edit_body(log, nullptr, kConv, id, 0, "new caption"), "new caption");
  EXPECT_EQ(*edit_body(log, &history, kConv, message_id_of(0, Offset{40}), 0, "t"), "t");
}

}  // namespace
}  // namespace qim
