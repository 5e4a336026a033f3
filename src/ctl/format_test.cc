#include "ctl/format.h"

#include <gtest/gtest.h>

namespace qim::ctl {
namespace {

TEST(EscapeBody, KeepsOneMessageOnOneLine) {
  EXPECT_EQ(escape_body("hi bob"), "hi bob");
  EXPECT_EQ(escape_body("a\nb\r\tc"), "a\\nb\\r\\tc");
  EXPECT_EQ(escape_body("back\\slash"), "back\\\\slash");
  EXPECT_EQ(escape_body(std::string("nul\0bell\a", 9)), "nul\\x00bell\\x07");
  EXPECT_EQ(escape_body("h\xc3\xa9llo"), "h\xc3\xa9llo");  // UTF-8 passes through
}

TEST(Lines, EntryHistoryAndAck) {
  client::Entry e;
  e.seq = 281474976710657;
  e.message_id = 281474976710721;
  e.sender = "alice";
  e.conversation = "d:alice:bob";
  e.server_time = 1800000000123;
  e.body = "hi\nthere";
  EXPECT_EQ(entry_line(e), "seq=281474976710657 from=alice conversation=d:alice:bob body=hi\\nthere");
  EXPECT_EQ(history_line(e), "message_id=281474976710721 from=alice time=1800000000123 body=hi\\nthere");

  client::ServerFrame ack;
  ack.message_id = 42;
  ack.conversation = "d:alice:bob";
  ack.server_time = 7;
  ack.duplicate = true;
  EXPECT_EQ(ack_line(ack), "message_id=42 conversation=d:alice:bob server_time=7 duplicate=true");
}

TEST(DirectConversation, OrdersTheTwoUsers) {
  EXPECT_EQ(*direct_conversation("alice", "bob"), "d:alice:bob");
  EXPECT_EQ(*direct_conversation("bob", "alice"), "d:alice:bob");
}

TEST(DirectConversation, RefusesANameWithTheSeparator) {
  auto c = direct_conversation("carol", "alice:bob");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.code(), Errc::kInvalidArgument);
  EXPECT_NE(c.error().message().find("user id 'alice:bob'"), std::string::npos) << c.error().message();
}

// A group's system entry (client_msg_id ~group:<op>) prints its text for people, not its JSON (issue 37).
TEST(Lines, SystemEntriesPrintTheirText) {
  client::Entry e;
  e.seq = 5;
  e.message_id = 9;
  e.sender = "bob";
  e.conversation = "g:00ff";
  e.client_msg_id = "~group:add";
  e.server_time = 7;
  e.body = R"({"group_op":"add","by":"bob","members":["carol"],"text":"bob added carol"})";
  EXPECT_EQ(entry_line(e), "seq=5 from=bob conversation=g:00ff system=bob added carol");
  EXPECT_EQ(history_line(e), "message_id=9 from=bob time=7 system=bob added carol");
  e.body = "not json";  // never an exception: the body as it is
  EXPECT_EQ(entry_line(e), "seq=5 from=bob conversation=g:00ff system=not json");
  e.client_msg_id = "note-1";  // an ordinary message whose body looks like one stays a body
  e.body = R"({"text":"x"})";
  EXPECT_EQ(entry_line(e), R"(seq=5 from=bob conversation=g:00ff body={"text":"x"})");
}

TEST(Lines, AttachmentsPrintTheirIds) {
  client::Entry e;
  e.seq = 3;
  e.message_id = 40;
  e.sender = "alice";
  e.conversation = "d:alice:bob";
  e.client_msg_id = "c9";
  e.body =
      R"({"qim":"attachments","text":"look here","attachments":[{"attachment":"a1.x.y","kind":"image",)"
      R"("name":"cat 1.png","content_type":"image/png","size":48213},{"attachment":"a1.p.q","kind":"file",)"
      R"("name":"n.txt","content_type":"text/plain","size":3}]})";
  EXPECT_EQ(entry_line(e),
            "seq=3 from=alice conversation=d:alice:bob body=look here attachment=a1.x.y kind=image "
            "name=cat 1.png size=48213 attachment=a1.p.q kind=file name=n.txt size=3");
  e.body = R"({"qim":"attachments", broken)";  // never an exception: the body as it is
  EXPECT_EQ(entry_line(e), R"(seq=3 from=alice conversation=d:alice:bob body={"qim":"attachments", broken)");
}

}  // namespace
}  // namespace qim::ctl

namespace qim::ctl {
namespace {

// qimctl conversations and read (issue 38 item 7): one line per conversation, unread "999+" when capped.
TEST(Lines, ConversationsAndRead) {
  client::ConversationItem d;
  d.conversation = "d:alice:bob";
  d.kind = "direct";
  d.peer = "bob";
  d.last.seq = 9;
  d.last.sender = "bob";
  d.last.server_time = 5;
  d.last.body = "hi\nthere";
  d.read_seq = 8;
  d.unread = 1;
  d.peer_read_through = 69;
  EXPECT_EQ(conversation_line(d),
            "conversation=d:alice:bob peer=bob unread=1 read_seq=8 last_seq=9 from=bob time=5 peer_read=69 "
            "body=hi\\nthere");
  client::ConversationItem g;
  g.conversation = "g:00ff";
  g.kind = "group";
  g.name = "the team";
  g.last.seq = 5;
  g.last.sender = "carol";
  g.unread = 999;
  g.unread_capped = true;
  g.peer_delivered_through = 3;
  EXPECT_EQ(
      conversation_line(g),
      "conversation=g:00ff group=the team unread=999+ read_seq=0 last_seq=5 from=carol time=0 delivered=3 "
      "body=");
  g.last.body = R"({"qim":"attachments","text":"","attachments":[{"attachment":"a1.x.y","kind":"image",)"
                R"("name":"c.png","content_type":"image/png","size":9}]})";
  EXPECT_EQ(
      conversation_line(g),
      "conversation=g:00ff group=the team unread=999+ read_seq=0 last_seq=5 from=carol time=0 delivered=3 "
      "body= attachment=a1.x.y kind=image name=c.png size=9");
  client::ServerFrame ok;
  ok.conversation = "d:alice:bob";
  ok.read_seq = 12;
  ok.unread = 0;
  EXPECT_EQ(read_line(ok), "conversation=d:alice:bob read_seq=12 unread=0");
}

}  // namespace
}  // namespace qim::ctl

namespace qim::ctl {
namespace {

// An edit or recall event entry (client_msg_id ~edit / ~recall, docs/protocol.md "Editing and recalling")
// prints what changed for people, not its JSON; an entry from a user the reader blocks says so.
TEST(Lines, EditAndRecallEventsPrintTheChange) {
  client::Entry e;
  e.seq = 12;
  e.message_id = 30;
  e.sender = "alice";
  e.conversation = "d:alice:bob";
  e.client_msg_id = "~edit";
  e.server_time = 7;
  e.body = R"({"event":"edit","message_id":"21","body":"hello\nworld","edited_at":7,"edit_count":2})";
  EXPECT_EQ(entry_line(e), "seq=12 from=alice conversation=d:alice:bob edit=21 edits=2 body=hello\\nworld");
  e.client_msg_id = "~recall";
  e.body = R"({"event":"recall","message_id":"21","by":"alice"})";
  EXPECT_EQ(entry_line(e), "seq=12 from=alice conversation=d:alice:bob recall=21");
  e.body = "not json";  // never an exception: the body as it is
  EXPECT_EQ(entry_line(e), "seq=12 from=alice conversation=d:alice:bob system=not json");
  e.client_msg_id = "~react";  // a kind this qimctl does not know: its body, as a system entry
  e.body = R"({"event":"react","message_id":"21"})";
  EXPECT_EQ(entry_line(e),
            R"(seq=12 from=alice conversation=d:alice:bob system={"event":"react","message_id":"21"})");
  e.client_msg_id = "c1";
  e.body = "hi";
  e.from_blocked = true;
  EXPECT_EQ(entry_line(e), "seq=12 from=alice conversation=d:alice:bob body=hi from_blocked");
}

}  // namespace
}  // namespace qim::ctl
