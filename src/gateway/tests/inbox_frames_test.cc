// The inbox frames' wire form (docs/protocol.md "Inbox"): what the parser takes and refuses, and what the
// encoders write, field by field as the protocol shows them.
#include "gateway/protocol/inbox_frames.h"

#include <gtest/gtest.h>

#include "gateway/protocol/client_frame.h"

namespace qim {
namespace {

class InboxFramesTest : public ::testing::Test {
 protected:
  InboxFrame frame(std::string_view text) {
    auto r = parser_.parse(text, FrameLimits{});
    if (auto* e = std::get_if<FrameError>(&r)) {
      ADD_FAILURE() << text << ": " << e->message;
      return InboxFrame{};
    }
    auto& body = std::get<ClientFrame>(r).body;
    if (!std::holds_alternative<InboxFrame>(body)) {
      ADD_FAILURE() << text << ": not an inbox frame";
      return InboxFrame{};
    }
    return std::get<InboxFrame>(body);
  }
  FrameError error(std::string_view text) {
    auto r = parser_.parse(text, FrameLimits{});
    EXPECT_TRUE(std::holds_alternative<FrameError>(r)) << text;
    return std::holds_alternative<FrameError>(r) ? std::get<FrameError>(r) : FrameError{};
  }
  FrameParser parser_;
};

TEST_F(InboxFramesTest, ParsesEachFrame) {
  auto read = std::get<ReadFrame>(
      frame(R"({"type":"READ","ref":"r1","conversation":"d:alice:bob","seq":"281474976710700"})"));
  EXPECT_EQ(read.conversation.str(), "d:alice:bob");
  EXPECT_EQ(read.seq.raw(), 281474976710700u);
  EXPECT_EQ(std::get<ReadFrame>(frame(R"({"type":"READ","conversation":"g:team","seq":5})")).seq.raw(), 5u);

  auto first = std::get<ConversationsFrame>(frame(R"({"type":"CONVERSATIONS","ref":"c1"})"));
  EXPECT_FALSE(first.before);
  EXPECT_EQ(first.limit, kDefaultConversationsLimit);
  auto next = std::get<ConversationsFrame>(frame(R"({"type":"CONVERSATIONS","before":"99","limit":200})"));
  EXPECT_EQ(next.before->raw(), 99u);
  EXPECT_EQ(next.limit, 200u);
  EXPECT_FALSE(std::get<ConversationsFrame>(frame(R"({"type":"CONVERSATIONS","before":null})")).before);

  auto receipts =
      std::get<ReceiptsFrame>(frame(R"({"type":"RECEIPTS","conversation":"g:team","message_id":"77"})"));
  EXPECT_EQ(receipts.conversation.str(), "g:team");
  EXPECT_EQ(receipts.message.value, 77u);

  auto read_settings = std::get<SettingsFrame>(frame(R"({"type":"SETTINGS","ref":"t1","v":1})"));
  EXPECT_FALSE(read_settings.writes());
  auto write =
      std::get<SettingsFrame>(frame(R"({"type":"SETTINGS","receipts":"off","presence":"contacts"})"));
  EXPECT_TRUE(write.writes());
  EXPECT_EQ(*write.receipts, "off");
  EXPECT_EQ(*write.presence, "contacts");
}

TEST_F(InboxFramesTest, RefusesMalformedFieldsWithTheirNames) {
  struct Case {
    const char* text;
    const char* expected;
  };
  for (const Case& c : std::initializer_list<Case>{
           {R"({"type":"READ","seq":"5"})", "field 'conversation' is required"},
           {R"({"type":"READ","conversation":"d:bob:alice","seq":"5"})", "field 'conversation'"},
           {R"({"type":"READ","conversation":"d:alice:bob"})", "field 'seq' is required"},
           {R"({"type":"READ","conversation":"d:alice:bob","seq":"-1"})", "field 'seq' must be"},
           {R"({"type":"READ","conversation":"d:alice:bob","seq":0})", "field 'seq' must be a seq"},
           {R"({"type":"CONVERSATIONS","limit":0})", "field 'limit' must be an integer in 1..200"},
           {R"({"type":"CONVERSATIONS","limit":201})", "field 'limit' must be an integer in 1..200"},
           {R"({"type":"CONVERSATIONS","before":"x"})", "field 'before' must be"},
           {R"({"type":"RECEIPTS","conversation":"g:team"})", "field 'message_id' is required"},
           {R"({"type":"RECEIPTS","conversation":5,"message_id":"1"})",
            "field 'conversation' must be a string"},
           {R"({"type":"SETTINGS","receipts":"maybe"})", "field 'receipts' must be one of 'on', 'off'"},
           {R"({"type":"SETTINGS","presence":true})", "field 'presence' must be a string"},
           {R"({"type":"SETTINGS","reciepts":"off"})", "SETTINGS has no setting 'reciepts'"}}) {
    FrameError e = error(c.text);
    EXPECT_EQ(e.code, WireCode::kInvalidArgument) << c.text;
    EXPECT_NE(e.message.find(c.expected), std::string::npos) << c.text << ": " << e.message;
  }
  EXPECT_EQ(error(R"({"type":"READ","ref":"r9","seq":"5"})").ref, "r9");
}

TEST_F(InboxFramesTest, EffectiveSettingsFillTheDefaults) {
  using M = std::map<std::string, std::string>;
  EXPECT_EQ(effective_settings({}), (M{{"presence", "everyone"}, {"receipts", "on"}}));
  EXPECT_EQ(effective_settings({{"receipts", "off"}, {"other", "x"}}),
            (M{{"presence", "everyone"}, {"receipts", "off"}}));
}

TEST(InboxFrameEncoders, WriteTheProtocolsFields) {
  const auto c = *ConversationId::parse("d:alice:bob");
  const UnreadState s{c, MailboxSeq::from_raw(281474976710700), 3, false};
  EXPECT_EQ(encode_read_ok("r1", s),
            R"({"type":"READ_OK","ref":"r1","conversation":"d:alice:bob","read_seq":"281474976710700",)"
            R"("unread":3,"unread_capped":false})");
  EXPECT_EQ(encode_read_state(s),
            R"({"type":"READ_STATE","conversation":"d:alice:bob","read_seq":"281474976710700",)"
            R"("unread":3,"unread_capped":false})");
  EXPECT_EQ(encode_receipt(c, *UserId::parse("alice"), MessageId{42}),
            R"({"type":"RECEIPT","conversation":"d:alice:bob","user":"alice","read_through":"42"})");
  EXPECT_EQ(encode_delivered(c, *UserId::parse("bob"), MessageId{43}),
            R"({"type":"DELIVERED","conversation":"d:alice:bob","user":"bob","message_id":"43"})");
  EXPECT_EQ(encode_receipts_page("x1", c, MessageId{7}, MessageReceipts{2, std::nullopt}),
            R"({"type":"RECEIPTS_PAGE","ref":"x1","conversation":"d:alice:bob","message_id":"7",)"
            R"("read_count":2,"readers":null})");
  EXPECT_EQ(encode_receipts_page("", c, MessageId{7},
                                 MessageReceipts{1, std::vector<UserId>{*UserId::parse("bob")}}),
            R"({"type":"RECEIPTS_PAGE","conversation":"d:alice:bob","message_id":"7","read_count":1,)"
            R"("readers":["bob"]})");
  EXPECT_EQ(encode_settings_ok("t1", effective_settings({{"receipts", "off"}})),
            R"({"type":"SETTINGS_OK","ref":"t1","settings":{"presence":"everyone","receipts":"off"}})");
}

TEST(InboxFrameEncoders, ConversationsPage) {
  ConversationPage page;
  ConversationSummary direct;
  direct.conversation = *ConversationId::parse("d:alice:bob");
  direct.last = InboxEntryRef{MailboxSeq::from_raw(9), MessageId{70}, *UserId::parse("bob"),
                              1800000000000,           true,          "hi \"alice\""};
  direct.read_seq = MailboxSeq::from_raw(8);
  direct.unread = 1;
  direct.peer_read_through = MessageId{69};
  ConversationSummary group;
  group.conversation = *ConversationId::parse("g:team");
  group.last = InboxEntryRef{MailboxSeq::from_raw(5), MessageId{60}, *UserId::parse("carol"), 7, true, "x"};
  group.unread = 999;
  group.unread_capped = true;
  group.muted = Mute{1800000009000};
  page.items = {direct, group};
  page.next_before = MailboxSeq::from_raw(5);
  page.unread_conversations = 2;
  const std::vector<ConversationLabel> labels{{"direct", "bob", std::nullopt},
                                              {"group", std::nullopt, std::nullopt, "the team"}};
  EXPECT_EQ(
      encode_conversations_page("c1", page, labels),
      R"({"type":"CONVERSATIONS_PAGE","ref":"c1","conversations":[)"
      R"({"conversation":"d:alice:bob","kind":"direct","peer":"bob","last":{"seq":"9","message_id":"70",)"
      R"("conversation":"d:alice:bob","sender":"bob","server_time":1800000000000,"body":"hi \"alice\""},)"
      R"("read_seq":"8","unread":1,"unread_capped":false,"peer_read_through":"69",)"
      R"("peer_delivered_through":null,"muted":false,"muted_until":null},)"
      R"({"conversation":"g:team","kind":"group","name":"the team","last":{"seq":"5","message_id":"60",)"
      R"("conversation":"g:team","sender":"carol","server_time":7,"body":"x"},"read_seq":"0",)"
      R"("unread":999,"unread_capped":true,"peer_read_through":null,"peer_delivered_through":null,)"
      R"("muted":true,"muted_until":1800000009000}],)"
      R"("next_before":"5","unread_conversations":2,"unread_conversations_capped":false})");
  EXPECT_EQ(encode_conversations_page("", ConversationPage{}, {}),
            R"({"type":"CONVERSATIONS_PAGE","conversations":[],"next_before":null,"unread_conversations":0,)"
            R"("unread_conversations_capped":false})");
}

}  // namespace
}  // namespace qim
