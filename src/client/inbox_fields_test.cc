// The C++ client reads the inbox frames (docs/protocol.md "Inbox") into typed fields.
#include <gtest/gtest.h>

#include "client/frames.h"

namespace qim::client {
namespace {

TEST(InboxFields, WritesTheRequests) {
  EXPECT_EQ(read_frame("d:alice:bob", 281474976710700, "r1"),
            R"({"type":"READ","ref":"r1","conversation":"d:alice:bob","seq":"281474976710700"})");
  EXPECT_EQ(conversations_frame(std::nullopt, 50), R"({"type":"CONVERSATIONS","limit":50})");
  EXPECT_EQ(conversations_frame(9, 2, "c"), R"({"type":"CONVERSATIONS","ref":"c","before":"9","limit":2})");
  EXPECT_EQ(receipts_frame("g:team", 7), R"({"type":"RECEIPTS","conversation":"g:team","message_id":"7"})");
  EXPECT_EQ(settings_frame({}), R"({"type":"SETTINGS"})");
  EXPECT_EQ(settings_frame({"off", "nobody"}), R"({"type":"SETTINGS","receipts":"off","presence":"nobody"})");
}

TEST(InboxFields, ReadsAConversationsPage) {
  auto f = parse_server_frame(
      R"({"type":"CONVERSATIONS_PAGE","ref":"c1","conversations":[)"
      R"({"conversation":"d:alice:bob","kind":"direct","peer":"bob","last":{"seq":"9","message_id":"70",)"
      R"("conversation":"d:alice:bob","sender":"bob","server_time":5,"body":"hi"},"read_seq":"8","unread":1,)"
      R"("unread_capped":false,"peer_read_through":"69","peer_delivered_through":null},)"
      R"({"conversation":"g:t","kind":"group","name":"team","last":{"seq":"5","message_id":"60",)"
      R"("conversation":"g:t","sender":"carol","server_time":7,"body":"x"},"read_seq":"0","unread":999,)"
      R"("unread_capped":true,"peer_read_through":null,"peer_delivered_through":null}],)"
      R"("next_before":"5","unread_conversations":99,"unread_conversations_capped":true})");
  ASSERT_TRUE(f.ok()) << f.error().to_string();
  ASSERT_EQ(f->conversations.size(), 2u);
  const auto& d = f->conversations[0];
  EXPECT_EQ(d.conversation, "d:alice:bob");
  EXPECT_EQ(d.kind, "direct");
  EXPECT_EQ(d.peer, "bob");
  EXPECT_EQ(d.last.seq, 9u);
  EXPECT_EQ(d.last.message_id, 70u);
  EXPECT_EQ(d.last.sender, "bob");
  EXPECT_EQ(d.last.body, "hi");
  EXPECT_EQ(d.read_seq, 8u);
  EXPECT_EQ(d.unread, 1u);
  EXPECT_EQ(d.peer_read_through, 69u);
  EXPECT_FALSE(d.peer_delivered_through);
  EXPECT_EQ(f->conversations[1].name, "team");
  EXPECT_TRUE(f->conversations[1].unread_capped);
  EXPECT_EQ(f->next_before, 5u);
  EXPECT_EQ(f->unread_conversations, 99u);
  EXPECT_TRUE(f->unread_conversations_capped);
}

TEST(InboxFields, ReadsTheOtherAnswersAndSignals) {
  auto ok = parse_server_frame(
      R"({"type":"READ_OK","ref":"r1","conversation":"d:a:b","read_seq":"12","unread":0,"unread_capped":false})");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->conversation, "d:a:b");
  EXPECT_EQ(ok->read_seq, 12u);
  auto receipt =
      parse_server_frame(R"({"type":"RECEIPT","conversation":"d:a:b","user":"a","read_through":"4"})");
  EXPECT_EQ(receipt->user, "a");
  EXPECT_EQ(receipt->read_through, 4u);
  auto delivered =
      parse_server_frame(R"({"type":"DELIVERED","conversation":"d:a:b","user":"b","message_id":"5"})");
  EXPECT_EQ(delivered->message_id, 5u);
  auto page = parse_server_frame(
      R"({"type":"RECEIPTS_PAGE","conversation":"g:t","message_id":"7","read_count":2,"readers":["b","c"]})");
  EXPECT_EQ(page->read_count, 2u);
  EXPECT_EQ(page->readers, (std::vector<std::string>{"b", "c"}));
  auto big = parse_server_frame(
      R"({"type":"RECEIPTS_PAGE","conversation":"g:t","message_id":"7","read_count":2,"readers":null})");
  EXPECT_FALSE(big->readers);
  auto settings =
      parse_server_frame(R"({"type":"SETTINGS_OK","settings":{"presence":"everyone","receipts":"off"}})");
  EXPECT_EQ(settings->settings.at("receipts"), "off");
  EXPECT_EQ(settings->settings.at("presence"), "everyone");
}

}  // namespace
}  // namespace qim::client
