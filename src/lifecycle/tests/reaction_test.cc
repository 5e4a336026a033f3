// Reactions (issue 39 item 4, docs/adr/0124): the emoji rule, decide_event's reaction rules, the fold of
// REACT/UNREACT into counts, and the state's codec across its versions.

#include <gtest/gtest.h>

#include "lifecycle/message_state.h"
#include "lifecycle/reaction.h"

namespace qim {
namespace {

constexpr uint64_t kTarget = (uint64_t{1} << 48) | 10;

MessageState sent() {
  MessageState s;
  s.id = MessageId{kTarget};
  s.conversation = ConversationId::parse("g:team").value();
  s.sender = UserId::parse("alice").value();
  s.client_msg_id = "c1";
  s.sent_at_ms = 1'000'000;
  return s;
}

EventRequest react(const char* actor, std::string emoji, uint64_t offset,
                   MessageEventKind kind = MessageEventKind::kReact) {
  EventRequest r;
  r.event = MessageEvent{kind, MessageId{kTarget}};
  r.conversation = ConversationId::parse("g:team").value();
  r.actor = UserId::parse(actor).value();
  r.at_ms = 1'000'000 + static_cast<int64_t>(offset);
  r.offset = offset;
  r.reaction = std::move(emoji);
  return r;
}

// Decides `r` against `s` and records it, as fanout does.
EventOutcome apply(MessageState& s, const EventRequest& r) {
  EventOutcome o = decide_event(&s, r, {});
  s.events[r.offset] = o;
  return o;
}

TEST(ReactionRule, EmojiGraphemesAndShortCodes) {
  for (const char* ok : {"\xF0\x9F\x91\x8D",                              // 👍
                         "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD",              // 👍🏽
                         "\xE2\x9D\xA4\xEF\xB8\x8F",                      // ❤️
                         "\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7",              // 🇫🇷
                         "\x31\xEF\xB8\x8F\xE2\x83\xA3",                  // 1️⃣
                         "\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB",  // 👩‍💻
                         ":thumbs_up:", ":+1:"}) {
    EXPECT_TRUE(valid_reaction(ok)) << ok;
  }
  for (const char* bad : {"", "a", "ok", "\xF0\x9F\x91\x8D\xF0\x9F\x91\x8D",  // two graphemes
                          "\xF0\x9F\x91\x8D ", "\xE2\x80\x8D",                // trailing space; ZWJ alone
                          "\xF0\x9F\x91\x8D\xE2\x80\x8D",                     // ZWJ joining nothing
                          "\xF0\x9F\x87\xAB",                                 // half a flag
                          "\xF0\x9F\x8F\xBD",                                 // a skin tone alone
                          "\xFF", "\xF0\x9F\x91", ":Thumbs:", "::", ":a b:", "thumbs_up:", "1"}) {
    EXPECT_FALSE(valid_reaction(bad)) << bad;
  }
}

TEST(ReactionRules, AnyMemberReactsAndCountsFold) {
  MessageState s = sent();
  EXPECT_TRUE(apply(s, react("bob", ":+1:", 20)).applied);
  EXPECT_TRUE(apply(s, react("carol", ":+1:", 21)).applied);
  EXPECT_TRUE(apply(s, react("bob", "\xF0\x9F\x8E\x89", 22)).applied);
  auto r = s.reactions();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].reaction, ":+1:");
  EXPECT_EQ(r[0].users.size(), 2u);
  EXPECT_EQ(r[1].users.size(), 1u);
  EXPECT_TRUE(apply(s, react("bob", ":+1:", 23, MessageEventKind::kUnreact)).applied);
  r = s.reactions();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].users, std::vector<UserId>{UserId::parse("carol").value()});
  EXPECT_TRUE(apply(s, react("bob", "\xF0\x9F\x8E\x89", 24, MessageEventKind::kUnreact)).applied);
  EXPECT_EQ(s.reactions().size(), 1u);  // nobody holds it: gone
  EXPECT_EQ(s.edit_count(), 0u);        // reactions are no edits
}

TEST(ReactionRules, Refusals) {
  MessageState s = sent();
  EXPECT_EQ(decide_event(nullptr, react("bob", ":+1:", 20), {}).refusal, EventRefusal::kUnknownMessage);
  EventRequest other = react("bob", ":+1:", 20);
  other.conversation = ConversationId::parse("g:other").value();
  EXPECT_EQ(decide_event(&s, other, {}).refusal, EventRefusal::kOtherConversation);
  EXPECT_EQ(decide_event(&s, react("bob", "hello", 20), {}).refusal, EventRefusal::kBadReaction);
  EXPECT_EQ(decide_event(&s, react("bob", ":+1:", 20, MessageEventKind::kUnreact), {}).refusal,
            EventRefusal::kReactionUnchanged);
  ASSERT_TRUE(apply(s, react("bob", ":+1:", 21)).applied);
  EXPECT_EQ(decide_event(&s, react("bob", ":+1:", 22), {}).refusal, EventRefusal::kReactionUnchanged);
  // No window: a reaction a year later is fine; not the sender's only.
  EXPECT_TRUE(decide_event(&s, react("dave", ":+1:", 400LL * 24 * 3600 * 1000), {}).applied);
  ASSERT_TRUE(apply(s, EventRequest{MessageEvent{MessageEventKind::kRecall, MessageId{kTarget}},
                                    s.conversation,
                                    s.sender,
                                    1'000'100,
                                    30,
                                    false,
                                    {}})
                  .applied);
  EXPECT_EQ(decide_event(&s, react("carol", ":+1:", 31), {}).refusal, EventRefusal::kRecalled);
}

TEST(ReactionRules, BoundsPerUserAndPerMessage) {
  MessageState s = sent();
  uint64_t offset = 100;
  for (const char* e : {":a:", ":b:", ":c:"}) ASSERT_TRUE(apply(s, react("bob", e, offset++)).applied);
  EXPECT_EQ(decide_event(&s, react("bob", ":d:", offset), {}).refusal, EventRefusal::kReactionLimit);
  ASSERT_TRUE(apply(s, react("bob", ":a:", offset++, MessageEventKind::kUnreact)).applied);
  EXPECT_TRUE(apply(s, react("bob", ":d:", offset++)).applied);  // room again
  // Fill the message to kMaxReactionsPerMessage distinct reactions.
  for (size_t i = s.reactions().size(); i < kMaxReactionsPerMessage; ++i) {
    const std::string user = "u" + std::to_string(i);
    ASSERT_TRUE(apply(s, react(user.c_str(), ":r" + std::to_string(i) + ":", offset++)).applied);
  }
  EXPECT_EQ(s.reactions().size(), kMaxReactionsPerMessage);
  EXPECT_EQ(decide_event(&s, react("zoe", ":new:", offset), {}).refusal, EventRefusal::kReactionLimit);
  EXPECT_TRUE(decide_event(&s, react("zoe", ":b:", offset), {}).applied);  // an existing one: fine
}

TEST(ReactionRules, AReplayDecidesTheSame) {
  MessageState s = sent();
  ASSERT_TRUE(apply(s, react("bob", ":a:", 20)).applied);
  ASSERT_TRUE(apply(s, react("bob", ":b:", 21)).applied);
  ASSERT_TRUE(apply(s, react("bob", ":c:", 22)).applied);
  const EventOutcome fourth = apply(s, react("bob", ":d:", 23));
  EXPECT_EQ(fourth.refusal, EventRefusal::kReactionLimit);
  ASSERT_TRUE(apply(s, react("bob", ":a:", 24, MessageEventKind::kUnreact)).applied);
  // Decided again with every later event in the state: only earlier offsets count.
  EXPECT_EQ(decide_event(&s, react("bob", ":d:", 23), {}), fourth);
  EXPECT_EQ(decide_event(&s, react("bob", ":b:", 21), {}), s.events.at(21));
  EXPECT_EQ(s.reactions(23).size(), 3u);
  // The entry's count is as of the event's offset, so a replay writes the same entry.
  EXPECT_EQ(event_entry_body(s, MessageEventKind::kReact, UserId::parse("bob").value(), ":a:", 20),
            "{\"event\":\"react\",\"message_id\":\"281474976710666\",\"by\":\"bob\",\"emoji\":\":a:\","
            "\"count\":1}");
  EXPECT_EQ(event_entry_client_id(MessageEventKind::kUnreact), "~unreact");
}

TEST(ReactionStateCodec, TodaysBytesDecodeAndStatesWithoutReactionsKeepThem) {
  // Version 1, as encode_message_state wrote it before reactions: a recall at offset 20.
  const std::string v1(
      "\x01\x0a\x00\x00\x00\x00\x00\x01\x00\x0b\x00\x00\x00\x64\x3a\x61\x6c\x69\x63\x65\x3a\x62\x6f\x62\x05"
      "\x00"
      "\x00\x00\x61\x6c\x69\x63\x65\x00\x00\x00\x00\x02\x00\x00\x00\x63\x31\x40\x42\x0f\x00\x00\x00\x00\x00"
      "\x01"
      "\x00\x00\x00\x14\x00\x00\x00\x00\x00\x00\x00\x02\x01\x00\x05\x00\x00\x00\x61\x6c\x69\x63\x65\xa4\x42"
      "\x0f"
      "\x00\x00\x00\x00\x00",
      83);
  auto old = decode_message_state(v1);
  ASSERT_TRUE(old.ok()) << old.error().to_string();
  EXPECT_EQ(old->conversation.str(), "d:alice:bob");
  ASSERT_EQ(old->events.size(), 1u);
  EXPECT_TRUE(old->recalled());
  EXPECT_EQ(encode_message_state(*old), v1);  // no reaction: still version 1, byte for byte

  MessageState s = sent();
  apply(s, EventRequest{MessageEvent{MessageEventKind::kEdit, MessageId{kTarget}},
                        s.conversation,
                        s.sender,
                        1'000'010,
                        19,
                        false,
                        {}});
  apply(s, react("bob", "\xF0\x9F\x91\x8D", 20));
  apply(s, react("bob", "nope", 21));  // refused, recorded with its reaction
  const std::string v2 = encode_message_state(s);
  EXPECT_EQ(static_cast<uint8_t>(v2[0]), 2);
  auto back = decode_message_state(v2);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(*back, s);
  EXPECT_EQ(decode_message_state(v2.substr(0, v2.size() - 1)).code(), Errc::kCorruptEntry);
}

}  // namespace
}  // namespace qim
