// The quote a reply carries (gateway/reply_quotes.h, docs/adr/0125): cut on a character boundary, and
// following the replied message's current state (an edit's body, a recall's flag).
#include "gateway/reply_quotes.h"

#include "gateway/protocol/server_frame.h"

#include <gtest/gtest.h>

#include <map>

namespace qim {
namespace {

// A history in a map: the rows as the archiver last wrote them.
class MapHistory final : public HistoryStore {
 public:
  std::map<uint64_t, Message> rows;
  int reads = 0;
  void put(const Message& m) { rows[m.id.value] = m; }
  Status append(const Message& m) override {
    rows[m.id.value] = m;
    return {};
  }
  Result<HistoryPage> read(const HistoryQuery& q) override {
    ++reads;
    HistoryPage page;
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
      if (it->second.conversation != q.conversation) continue;
      if (q.before && it->first >= q.before->value) continue;
      if (page.messages.size() == q.limit) {
        page.more = true;
        break;
      }
      page.messages.push_back(it->second);
    }
    return page;
  }
  OpCounts op_counts() const override { return {}; }
};

Message message(uint64_t id, const std::string& body, std::optional<uint64_t> reply_to = std::nullopt) {
  Message m;
  m.id = MessageId{id};
  m.conversation = *ConversationId::parse("d:alice:bob");
  m.sender = *UserId::parse(id % 2 ? "alice" : "bob");
  m.body = body;
  if (reply_to) m.reply_to = MessageId{*reply_to};
  return m;
}

std::string cut(std::string_view text, size_t max, bool* truncated = nullptr) {
  bool t = false;
  std::string out = cut_characters(text, max, t);
  if (truncated) *truncated = t;
  return out;
}

TEST(ReplyQuotes, CutsOnACharacterBoundary) {
  bool truncated = true;
  EXPECT_EQ(cut("hello", 5, &truncated), "hello");
  EXPECT_FALSE(truncated);
  EXPECT_EQ(cut("hello!", 5, &truncated), "hello");
  EXPECT_TRUE(truncated);
  EXPECT_EQ(cut("h\xC3\xA9llo", 2), "h\xC3\xA9");  // é: one code point, two bytes
  EXPECT_EQ(cut("e\xCC\x81"
                "x",
                1),
            "e\xCC\x81");  // e + combining acute: one character
  const std::string family = "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7";
  EXPECT_EQ(cut(family + "a", 1), family);                        // a ZWJ sequence is one character
  const std::string thumbs = "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD";  // 👍 + skin tone
  EXPECT_EQ(cut(thumbs + thumbs, 1), thumbs);
  const std::string flag = "\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7";  // 🇫🇷: two regional indicators
  EXPECT_EQ(cut(flag + flag, 1), flag);
  EXPECT_EQ(cut("a\r\nb", 2), "a\r\n");
  EXPECT_EQ(cut(std::string(150, 'x'), kQuoteCharacters).size(), kQuoteCharacters);
  EXPECT_EQ(cut("\xFF\xFE"
                "a",
                2),
            "\xFF\xFE");  // bytes that are no UTF-8: one each
}

TEST(ReplyQuotes, AQuoteFollowsTheRepliedMessagesCurrentState) {
  MapHistory history;
  auto states = make_memory_message_state_store();
  history.put(message(1, "the original"));
  history.put(message(2, "a plain one"));
  history.put(message(3, "my reply", 1));
  auto page_of = [&]() {
    HistoryPage page = *history.read(HistoryQuery{*ConversationId::parse("d:alice:bob"), MessageId{4}, 2});
    EXPECT_TRUE(quote_replies(history, states.get(), page).ok());
    return page;
  };
  // Message 1 is not in the page (two newest: 3 and 2): read from the history. A plain message has none.
  HistoryPage page = page_of();
  ASSERT_EQ(page.quotes.size(), 1u);
  ReplyQuote q = page.quotes.at(3);
  EXPECT_EQ(q.message_id, MessageId{1});
  EXPECT_EQ(q.sender.str(), "alice");
  EXPECT_EQ(q.body, "the original");
  EXPECT_FALSE(q.recalled || q.unavailable || q.truncated);

  // Edited: the archiver rewrote its row with the current body.
  history.put(message(1, "the edited one"));
  EXPECT_EQ(page_of().quotes.at(3).body, "the edited one");

  // Recalled (fanout's state says so before the archiver writes the tombstone): no body.
  MessageState recalled;
  recalled.id = MessageId{1};
  recalled.conversation = *ConversationId::parse("d:alice:bob");
  recalled.sender = *UserId::parse("alice");
  recalled.events[10] =
      EventOutcome{MessageEventKind::kRecall, true, EventRefusal::kNone, recalled.sender, 5, {}};
  ASSERT_TRUE(states->put(recalled, 0, 10).ok());
  q = page_of().quotes.at(3);
  EXPECT_TRUE(q.recalled);
  EXPECT_TRUE(q.body.empty());
  EXPECT_EQ(q.message_id, MessageId{1});

  // No longer kept: unavailable.
  history.rows.erase(1);
  auto none = make_memory_message_state_store();
  HistoryPage gone = *history.read(HistoryQuery{*ConversationId::parse("d:alice:bob"), std::nullopt, 5});
  ASSERT_TRUE(quote_replies(history, none.get(), gone).ok());
  EXPECT_TRUE(gone.quotes.at(3).unavailable);
}

// DELIVER and SYNC: a replied message among the entries (just sent, maybe not archived) is quoted from
// them; every recipient's entry of a reply gets the quote; the frame carries reply_to and quote.
TEST(ReplyQuotes, EntriesAreQuotedFromThemselvesAndTheFrameCarriesIt) {
  MapHistory history;  // empty: nothing archived yet
  std::vector<MailboxEntry> entries;
  for (const char* u : {"alice", "bob"}) {
    entries.push_back(MailboxEntry{*UserId::parse(u), MailboxSeq::from_raw(1), message(1, "the original")});
    entries.push_back(MailboxEntry{*UserId::parse(u), MailboxSeq::from_raw(2), message(2, "my reply", 1)});
  }
  auto quotes = quote_entries(&history, nullptr, entries);
  ASSERT_TRUE(quotes.ok());
  ASSERT_EQ(quotes->size(), 1u);
  EXPECT_EQ(quotes->at(2).body, "the original");
  EXPECT_EQ(history.reads, 0);
  ReaderMarks marks;
  marks.quotes = &*quotes;
  const auto frames = encode_delivers(std::span(entries).subspan(2, 2), MailboxSeq::from_raw(1),
                                      MailboxSeq::from_raw(2), kMaxMessageFrameBytes, &marks);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_NE(
      frames[0].find(R"("reply_to":"1","quote":{"message_id":"1","sender":"alice","body":"the original",)"
                     R"("truncated":false})"),
      std::string::npos)
      << frames[0];
  // Without a history store, or without replies: nothing read, no quote.
  EXPECT_TRUE(quote_entries(nullptr, nullptr, entries)->empty());
  EXPECT_TRUE(quote_entries(&history, nullptr, std::span(entries).subspan(0, 1))->empty());
  EXPECT_EQ(history.reads, 0);
}

TEST(ReplyQuotes, APageWithoutRepliesReadsNothing) {
  MapHistory history;
  history.put(message(1, "a"));
  history.put(message(2, "b"));
  HistoryPage page = *history.read(HistoryQuery{*ConversationId::parse("d:alice:bob"), std::nullopt, 5});
  const int before = history.reads;
  ASSERT_TRUE(quote_replies(history, nullptr, page).ok());
  EXPECT_EQ(history.reads, before);
  EXPECT_TRUE(page.quotes.empty());
}

}  // namespace
}  // namespace qim
