// The privacy frames' wire form (docs/protocol.md "Blocking", "Mute", "Delete for me"): what the parser
// takes and refuses, and what the encoders write.
#include "gateway/protocol/privacy_frames.h"

#include <gtest/gtest.h>

#include "gateway/protocol/client_frame.h"

namespace qim {
namespace {

class PrivacyFramesTest : public ::testing::Test {
 protected:
  PrivacyFrame frame(std::string_view text) {
    auto r = parser_.parse(text, FrameLimits{});
    if (auto* e = std::get_if<FrameError>(&r)) {
      ADD_FAILURE() << text << ": " << e->message;
      return PrivacyFrame{};
    }
    auto* inbox = std::get_if<InboxFrame>(&std::get<ClientFrame>(r).body);
    if (inbox == nullptr || !std::holds_alternative<PrivacyFrame>(*inbox)) {
      ADD_FAILURE() << text << ": not a privacy frame";
      return PrivacyFrame{};
    }
    return std::get<PrivacyFrame>(*inbox);
  }
  std::string error(std::string_view text) {
    auto r = parser_.parse(text, FrameLimits{});
    EXPECT_TRUE(std::holds_alternative<FrameError>(r)) << text;
    if (!std::holds_alternative<FrameError>(r)) return {};
    EXPECT_EQ(std::get<FrameError>(r).code, WireCode::kInvalidArgument) << text;
    return std::get<FrameError>(r).message;
  }
  FrameParser parser_;
};

TEST_F(PrivacyFramesTest, ParsesEachFrame) {
  auto block = std::get<BlockFrame>(frame(R"({"type":"BLOCK","ref":"k","user":"bob"})"));
  EXPECT_EQ(block.user.str(), "bob");
  EXPECT_TRUE(block.blocked);
  EXPECT_FALSE(std::get<BlockFrame>(frame(R"({"type":"UNBLOCK","user":"bob"})")).blocked);
  EXPECT_TRUE(std::holds_alternative<BlocksFrame>(frame(R"({"type":"BLOCKS"})")));
  auto mute = std::get<MuteFrame>(frame(R"({"type":"MUTE","conversation":"g:team","until":1800000000000})"));
  EXPECT_EQ(mute.conversation.str(), "g:team");
  EXPECT_EQ(mute.until_ms, 1800000000000);
  EXPECT_FALSE(std::get<MuteFrame>(frame(R"({"type":"MUTE","conversation":"g:team"})")).until_ms);
  EXPECT_FALSE(std::get<MuteFrame>(frame(R"({"type":"UNMUTE","conversation":"g:team"})")).muted);
  auto del = std::get<DeleteForMeFrame>(
      frame(R"({"type":"DELETE_FOR_ME","conversation":"d:alice:bob","message_id":"281474976710722"})"));
  EXPECT_EQ(del.message->value, 281474976710722u);
  EXPECT_FALSE(
      std::get<DeleteForMeFrame>(frame(R"({"type":"DELETE_FOR_ME","conversation":"d:alice:bob"})")).message);
}

TEST_F(PrivacyFramesTest, RefusesMalformedFields) {
  EXPECT_NE(error(R"({"type":"BLOCK"})").find("'user'"), std::string::npos);
  EXPECT_NE(error(R"({"type":"BLOCK","user":"a:b"})").find("'user'"), std::string::npos);
  EXPECT_NE(error(R"({"type":"MUTE","conversation":"d:bob:alice"})").find("'conversation'"),
            std::string::npos);
  EXPECT_NE(error(R"({"type":"MUTE","conversation":"g:team","until":"soon"})").find("'until'"),
            std::string::npos);
  EXPECT_NE(error(R"({"type":"DELETE_FOR_ME","conversation":"g:team","message_id":-1})").find("'message_id'"),
            std::string::npos);
}

TEST_F(PrivacyFramesTest, EncodesAnswersAndPushes) {
  EXPECT_EQ(encode_block("BLOCK_OK", "k", *UserId::parse("bob"), true),
            R"({"type":"BLOCK_OK","ref":"k","user":"bob","blocked":true})");
  const UserId users[] = {*UserId::parse("bob"), *UserId::parse("eve")};
  EXPECT_EQ(encode_blocks_list("l", users), R"({"type":"BLOCKS_LIST","ref":"l","users":["bob","eve"]})");
  const auto g = ConversationId::unchecked("g:team");
  EXPECT_EQ(encode_mute("MUTE_CHANGED", {}, g, Mute{}),
            R"({"type":"MUTE_CHANGED","conversation":"g:team","muted":true,"muted_until":null})");
  EXPECT_EQ(encode_mute("MUTE_OK", "m", g, Mute{5}),
            R"({"type":"MUTE_OK","ref":"m","conversation":"g:team","muted":true,"muted_until":5})");
  EXPECT_EQ(encode_mute("MUTE_OK", "m", g, std::nullopt),
            R"({"type":"MUTE_OK","ref":"m","conversation":"g:team","muted":false,"muted_until":null})");
  EXPECT_EQ(encode_deleted("DELETE_OK", "x", g, std::nullopt, MessageId{7}),
            R"({"type":"DELETE_OK","ref":"x","conversation":"g:team","through":"7"})");
}

}  // namespace
}  // namespace qim
