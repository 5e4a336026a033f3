#include "gateway/protocol/client_frame.h"

#include <gtest/gtest.h>

namespace qim {
namespace {

class ClientFrameTest : public ::testing::Test {
 protected:
  std::variant<ClientFrame, FrameError> parse(std::string_view text) { return parser_.parse(text, limits_); }
  FrameError error(std::string_view text) {
    auto r = parse(text);
    EXPECT_TRUE(std::holds_alternative<FrameError>(r)) << text;
    return std::holds_alternative<FrameError>(r) ? std::get<FrameError>(r) : FrameError{};
  }
  ClientFrame frame(std::string_view text) {
    auto r = parse(text);
    if (auto* e = std::get_if<FrameError>(&r)) ADD_FAILURE() << text << ": " << e->message;
    return std::holds_alternative<ClientFrame>(r) ? std::get<ClientFrame>(r) : ClientFrame{};
  }

  FrameParser parser_;
  FrameLimits limits_{16};
};

TEST_F(ClientFrameTest, ParsesEveryType) {
  auto auth = frame(R"({"type":"AUTH","token":"t.x","ref":"r1","v":1})");
  EXPECT_EQ(auth.ref, "r1");
  EXPECT_EQ(std::get<AuthFrame>(auth.body).token, "t.x");

  auto send =
      std::get<SendFrame>(frame(R"({"type":"SEND","client_msg_id":"c1","to":"bob","body":"hi"})").body);
  EXPECT_EQ(send.client_msg_id, "c1");
  EXPECT_EQ(send.to->str(), "bob");
  EXPECT_FALSE(send.conversation.has_value());
  auto send2 = std::get<SendFrame>(
      frame(R"({"type":"SEND","client_msg_id":"c1","conversation":"d:a:b","body":"x"})").body);
  EXPECT_EQ(send2.conversation->str(), "d:a:b");
  EXPECT_FALSE(send2.reply_to);
  auto reply = std::get<SendFrame>(
      frame(R"({"type":"SEND","client_msg_id":"c1","to":"bob","body":"x","reply_to":"281474976710657"})")
          .body);
  ASSERT_TRUE(reply.reply_to);
  EXPECT_EQ(reply.reply_to->value, 281474976710657u);
  auto to_first = std::get<SendFrame>(
      frame(R"({"type":"SEND","client_msg_id":"c1","to":"bob","body":"x","reply_to":0})").body);
  EXPECT_EQ(to_first.reply_to, MessageId{0});  // partition 0's first message is a message
  EXPECT_EQ(error(R"({"type":"SEND","client_msg_id":"c1","to":"bob","body":"x","reply_to":"x"})").code,
            WireCode::kInvalidArgument);

  auto sync = std::get<SyncFrame>(frame(R"({"type":"SYNC","after":"281474976710657","limit":7})").body);
  EXPECT_EQ(sync.after.raw(), 281474976710657u);
  EXPECT_EQ(sync.limit, 7u);
  auto sync_default = std::get<SyncFrame>(frame(R"({"type":"SYNC"})").body);
  EXPECT_TRUE(sync_default.after.is_zero());
  EXPECT_EQ(sync_default.limit, kDefaultSyncLimit);

  auto history =
      std::get<HistoryFrame>(frame(R"({"type":"HISTORY","conversation":"d:a:b","before":12})").body);
  EXPECT_EQ(history.before->value, 12u);
  EXPECT_EQ(history.limit, kDefaultHistoryLimit);
  EXPECT_TRUE(std::holds_alternative<PingFrame>(frame(R"({"type":"PING"})").body));
}

TEST_F(ClientFrameTest, StableCodesForBadInput) {
  EXPECT_EQ(error("not json").code, WireCode::kBadFrame);
  EXPECT_EQ(error("[1,2]").code, WireCode::kBadFrame);
  EXPECT_EQ(error(R"({"kind":"SEND"})").code, WireCode::kBadFrame);
  EXPECT_EQ(error(R"({"type":5})").code, WireCode::kBadFrame);
  EXPECT_EQ(error("{\"type\":\"\xff\"}").code, WireCode::kBadFrame);  // invalid UTF-8
  EXPECT_EQ(error(R"({"type":"DANCE","ref":"x"})").code, WireCode::kUnknownType);
  EXPECT_EQ(error(R"({"type":"DANCE","ref":"x"})").ref, "x");
  EXPECT_EQ(error(R"({"type":"PING","v":2})").code, WireCode::kUnsupportedVersion);
  EXPECT_EQ(error(R"({"type":"SEND","client_msg_id":"c","to":"b","body":"01234567890123456"})").code,
            WireCode::kTooLarge);
  EXPECT_EQ(error(R"({"type":"SEND","client_msg_id":"c","to":"b","body":7})").code,
            WireCode::kInvalidArgument);
  EXPECT_EQ(error(R"({"type":"SEND","client_msg_id":"c","body":"x"})").code, WireCode::kInvalidArgument);
  EXPECT_EQ(error(R"({"type":"SEND","client_msg_id":"c","to":"b","conversation":"d:a:b","body":"x"})").code,
            WireCode::kInvalidArgument);
  EXPECT_EQ(error(R"({"type":"SEND","client_msg_id":"","to":"b","body":"x"})").code,
            WireCode::kInvalidArgument);
  EXPECT_EQ(error(R"({"type":"SEND","client_msg_id":"c","to":"b c","body":"x"})").code,
            WireCode::kInvalidArgument);
  EXPECT_EQ(error(R"({"type":"SYNC","after":-1})").code, WireCode::kInvalidArgument);
  EXPECT_EQ(error(R"({"type":"SYNC","after":"12x"})").code, WireCode::kInvalidArgument);
  EXPECT_EQ(error(R"({"type":"SYNC","limit":0})").code, WireCode::kInvalidArgument);
  EXPECT_EQ(error(R"({"type":"SYNC","limit":100000})").code, WireCode::kInvalidArgument);
  EXPECT_EQ(error(R"({"type":"HISTORY"})").code, WireCode::kInvalidArgument);
  EXPECT_EQ(error(R"({"type":"AUTH","token":null})").code, WireCode::kInvalidArgument);
  EXPECT_EQ(error(R"({"type":"PING","ref":7})").code, WireCode::kInvalidArgument);
}

TEST_F(ClientFrameTest, ASenderFieldIsRefusedNotIgnored) {
  auto e = error(R"({"type":"SEND","client_msg_id":"c","to":"b","body":"x","sender":"mallory"})");
  EXPECT_EQ(e.code, WireCode::kForbidden);
  EXPECT_NE(e.message.find("authenticated user"), std::string::npos);
  EXPECT_EQ(error(R"({"type":"SEND","client_msg_id":"c","to":"b","body":"x","from":"m"})").code,
            WireCode::kForbidden);
}

TEST_F(ClientFrameTest, ANumberBeyond64BitsIsAnInvalidArgumentNamingTheField) {
  auto after = error(R"({"type":"SYNC","ref":"r","after":18446744073709551616})");
  EXPECT_EQ(after.code, WireCode::kInvalidArgument) << after.message;
  EXPECT_NE(after.message.find("'after'"), std::string::npos) << after.message;
  EXPECT_EQ(after.ref, "r");
  auto before = error(R"({"type":"HISTORY","conversation":"d:a:b","before":-99999999999999999999})");
  EXPECT_EQ(before.code, WireCode::kInvalidArgument) << before.message;
  EXPECT_NE(before.message.find("'before'"), std::string::npos) << before.message;
  // A number nobody can place is still a bad frame.
  EXPECT_EQ(error(R"({"type":"PING","x":[18446744073709551616]})").code, WireCode::kBadFrame);
}

TEST_F(ClientFrameTest, WhatIsNoJsonNumberIsABadFrameNotANumberOutOfRange) {
  for (std::string_view text :
       {R"({"type":"SYNC","ref":"r","after":-Infinity})", R"({"type":"SYNC","ref":"r","after":Infinity})",
        R"({"type":"SYNC","ref":"r","after":-NaN})", R"({"type":"SYNC","after":-})",
        R"({"type":"SYNC","after":-01})",
        R"({"type":"SYNC","after":18446744073709551616,"before":-Infinity})"}) {
    auto e = error(text);
    EXPECT_EQ(e.code, WireCode::kBadFrame) << text << " -> " << e.message;
  }
  // Real JSON numbers out of range still name their field, exponents and fractions included.
  EXPECT_EQ(error(R"({"type":"SYNC","after":-1.5e400})").code, WireCode::kInvalidArgument);
}

TEST_F(ClientFrameTest, ARepeatedKeyIsRefusedNamingTheKey) {
  auto to = error(R"({"type":"SEND","ref":"r","client_msg_id":"c","to":"b","to":"mallory","body":"x"})");
  EXPECT_EQ(to.code, WireCode::kInvalidArgument);
  EXPECT_NE(to.message.find("'to'"), std::string::npos) << to.message;
  EXPECT_EQ(to.ref, "r");
  EXPECT_EQ(error(R"({"type":"PING","type":"SEND"})").code, WireCode::kInvalidArgument);
  auto ref = error(R"({"type":"PING","ref":"a","ref":"b"})");
  EXPECT_EQ(ref.code, WireCode::kInvalidArgument);
  EXPECT_EQ(ref.ref, "");  // which ref would it be?
  // The same key in a nested (ignored) object is not a repeat at the top level.
  EXPECT_TRUE(std::holds_alternative<PingFrame>(frame(R"({"type":"PING","x":{"k":1},"y":{"k":2}})").body));
}

TEST_F(ClientFrameTest, PeekRefReadsTheRefOfAnyFrame) {
  EXPECT_EQ(parser_.peek_ref(R"({"type":"SEND","ref":"s9","body":"x"})"), "s9");
  EXPECT_EQ(parser_.peek_ref(R"({"type":"PING"})"), "");
  EXPECT_EQ(parser_.peek_ref(R"({"ref":7})"), "");
  EXPECT_EQ(parser_.peek_ref(R"({"ref":"a","ref":"b"})"), "");
  EXPECT_EQ(parser_.peek_ref("not json"), "");
  // A large frame's ref too (a SEND with a 16 KiB body dropped for the rate still hears its ref).
  std::string big = R"({"type":"SEND","ref":"big","body":")" + std::string(16 * 1024, '\x7f') + R"("})";
  EXPECT_EQ(parser_.peek_ref(big), "big");
}

TEST_F(ClientFrameTest, DeeplyNestedInputIsAnErrorNotACrash) {
  std::string deep(100000, '[');
  EXPECT_EQ(error(deep).code, WireCode::kBadFrame);
  std::string obj = R"({"type":"PING","x":)" + std::string(5000, '[') + std::string(5000, ']') + "}";
  auto r = parse(obj);  // either accepted (unknown field) or refused; never a crash
  (void)r;
}

}  // namespace
}  // namespace qim

namespace qim {
namespace {

class GroupFrameTest : public ::testing::Test {
 protected:
  std::variant<ClientFrame, FrameError> parse(std::string_view text) {
    return parser_.parse(text, FrameLimits{16});
  }
  GroupFrame group(std::string_view text) {
    auto r = parse(text);
    if (auto* e = std::get_if<FrameError>(&r)) ADD_FAILURE() << text << ": " << e->message;
    auto* f = std::get_if<ClientFrame>(&r);
    return f != nullptr && std::holds_alternative<GroupFrame>(f->body) ? std::get<GroupFrame>(f->body)
                                                                       : GroupFrame{};
  }
  std::string refused(std::string_view text) {
    auto r = parse(text);
    auto* e = std::get_if<FrameError>(&r);
    EXPECT_NE(e, nullptr) << text;
    if (e == nullptr) return {};
    EXPECT_EQ(e->code, WireCode::kInvalidArgument) << text;
    return e->message;
  }
  FrameParser parser_;
};

TEST_F(GroupFrameTest, ParsesEveryGroupFrame) {
  auto create = group(R"({"type":"GROUP_CREATE","name":"team","members":["bob","carol"]})");
  EXPECT_EQ(create.request, GroupRequest::kCreate);
  EXPECT_EQ(create.name, "team");
  ASSERT_EQ(create.members.size(), 2u);
  EXPECT_EQ(create.members[1].str(), "carol");
  EXPECT_TRUE(group(R"({"type":"GROUP_CREATE","name":"solo"})").members.empty());
  auto add = group(R"({"type":"GROUP_ADD","group":"g:abc","members":["dave"]})");
  EXPECT_EQ(add.request, GroupRequest::kAdd);
  EXPECT_EQ(add.group.str(), "abc");
  EXPECT_EQ(group(R"({"type":"GROUP_REMOVE","group":"g:abc","members":["dave"]})").request,
            GroupRequest::kRemove);
  EXPECT_EQ(group(R"({"type":"GROUP_LEAVE","group":"g:abc"})").request, GroupRequest::kLeave);
  EXPECT_EQ(group(R"({"type":"GROUP_RENAME","group":"g:abc","name":"new"})").name, "new");
  auto role = group(R"({"type":"GROUP_ROLE","group":"g:abc","member":"bob","role":"admin"})");
  EXPECT_EQ(role.role, GroupRole::kAdmin);
  EXPECT_EQ(role.members.at(0).str(), "bob");
  EXPECT_EQ(group(R"({"type":"GROUPS"})").request, GroupRequest::kList);
  EXPECT_EQ(group(R"({"type":"GROUP_MEMBERS","group":"g:abc"})").request, GroupRequest::kMembers);
}

TEST_F(GroupFrameTest, RefusesBadGroupFramesNamingTheField) {
  EXPECT_NE(refused(R"({"type":"GROUP_ADD","group":"d:a:b","members":["x"]})").find("is not a group"),
            std::string::npos);
  EXPECT_NE(refused(R"({"type":"GROUP_ADD","group":"g:a:b","members":["x"]})").find("field 'group'"),
            std::string::npos);
  EXPECT_NE(refused(R"({"type":"GROUP_ADD","group":"g:abc","members":[]})").find("at least one"),
            std::string::npos);
  EXPECT_NE(refused(R"({"type":"GROUP_ADD","group":"g:abc","members":["x","x"]})").find("twice"),
            std::string::npos);
  EXPECT_NE(refused(R"({"type":"GROUP_ADD","group":"g:abc","members":["a:b"]})").find("field 'members'"),
            std::string::npos);
  EXPECT_NE(refused(R"({"type":"GROUP_CREATE","name":""})").find("field 'name'"), std::string::npos);
  EXPECT_NE(refused(R"({"type":"GROUP_ROLE","group":"g:abc","member":"bob","role":"owner"})").find("'role'"),
            std::string::npos);
  std::string many = R"({"type":"GROUP_ADD","group":"g:abc","members":[)";
  for (size_t i = 0; i <= kMaxUsersPerGroupOp; ++i) many += (i ? ",\"u" : "\"u") + std::to_string(i) + "\"";
  many += "]}";
  EXPECT_NE(refused(many).find("more than 500"), std::string::npos);
}

}  // namespace
}  // namespace qim

namespace qim {
namespace {

// EDIT and RECALL (docs/protocol.md "Editing and recalling").
TEST(MessageEventFrames, ParseAndRefuse) {
  FrameParser parser;
  const FrameLimits limits{16};
  auto ok = [&](std::string_view text) {
    auto r = parser.parse(text, limits);
    EXPECT_TRUE(std::holds_alternative<ClientFrame>(r)) << text;
    return std::holds_alternative<ClientFrame>(r) ? std::get<MessageEventFrame>(std::get<ClientFrame>(r).body)
                                                  : MessageEventFrame{};
  };
  auto refused = [&](std::string_view text) {
    auto r = parser.parse(text, limits);
    EXPECT_TRUE(std::holds_alternative<FrameError>(r)) << text;
    return std::holds_alternative<FrameError>(r) ? std::get<FrameError>(r).code : WireCode::kInternal;
  };
  auto edit = ok(
      R"({"type":"EDIT","client_msg_id":"e1","conversation":"d:a:b","message_id":"281474976710657","body":"new"})");
  EXPECT_EQ(edit.kind, MessageEventKind::kEdit);
  EXPECT_EQ(edit.target.value, 281474976710657u);
  EXPECT_EQ(edit.conversation.str(), "d:a:b");
  EXPECT_EQ(edit.body, "new");
  auto recall = ok(R"({"type":"RECALL","client_msg_id":"r1","conversation":"g:team","message_id":5})");
  EXPECT_EQ(recall.kind, MessageEventKind::kRecall);
  EXPECT_EQ(recall.target.value, 5u);
  EXPECT_TRUE(recall.body.empty());
  EXPECT_EQ(refused(R"({"type":"EDIT","client_msg_id":"e1","conversation":"d:a:b","message_id":"1"})"),
            WireCode::kInvalidArgument);  // no body
  EXPECT_EQ(
      refused(R"({"type":"EDIT","client_msg_id":"e1","conversation":"d:a:b","message_id":"1","body":""})"),
      WireCode::kInvalidArgument);
  EXPECT_EQ(
      refused(
          R"({"type":"EDIT","client_msg_id":"e1","conversation":"d:a:b","message_id":"1","body":"0123456789abcdefg"})"),
      WireCode::kTooLarge);
  EXPECT_EQ(refused(R"({"type":"RECALL","client_msg_id":"~r","conversation":"d:a:b","message_id":"1"})"),
            WireCode::kInvalidArgument);  // the system entries' prefix
  EXPECT_EQ(refused(R"({"type":"RECALL","client_msg_id":"r","conversation":"d:a:b"})"),
            WireCode::kInvalidArgument);
  EXPECT_EQ(refused(R"({"type":"RECALL","client_msg_id":"r","conversation":"nope","message_id":"1"})"),
            WireCode::kInvalidArgument);
  EXPECT_EQ(wire_code_name(WireCode::kUnknownMessage), "UNKNOWN_MESSAGE");
  EXPECT_EQ(wire_code_name(WireCode::kWindowPassed), "WINDOW_PASSED");
  EXPECT_EQ(wire_code_name(WireCode::kMessageRecalled), "MESSAGE_RECALLED");
  // REACT and UNREACT (docs/protocol.md "Reactions"): the emoji travels as the event's body; whether it is
  // an emoji is decide_event's rule (BAD_REACTION), not the parser's.
  auto react =
      ok(R"({"type":"REACT","client_msg_id":"x1","conversation":"g:team","message_id":"5","emoji":":+1:"})");
  EXPECT_EQ(react.kind, MessageEventKind::kReact);
  EXPECT_EQ(react.body, ":+1:");
  auto unreact =
      ok(R"({"type":"UNREACT","client_msg_id":"x2","conversation":"g:team","message_id":"5","emoji":"x"})");
  EXPECT_EQ(unreact.kind, MessageEventKind::kUnreact);
  EXPECT_EQ(refused(R"({"type":"REACT","client_msg_id":"x3","conversation":"g:team","message_id":"5"})"),
            WireCode::kInvalidArgument);
  EXPECT_EQ(
      refused(R"({"type":"REACT","client_msg_id":"x3","conversation":"g:team","message_id":"5","emoji":""})"),
      WireCode::kInvalidArgument);
  EXPECT_EQ(wire_code_name(WireCode::kBadReaction), "BAD_REACTION");
  EXPECT_EQ(wire_code_name(WireCode::kReactionLimit), "REACTION_LIMIT");
  EXPECT_EQ(wire_code_name(WireCode::kReactionUnchanged), "REACTION_UNCHANGED");
}

}  // namespace
}  // namespace qim
