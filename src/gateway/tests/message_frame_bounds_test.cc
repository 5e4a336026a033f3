// The frames that carry messages are bounded by their encoded size (server_frame.h): a body of control
// bytes is six times larger escaped, so a page bounded by count alone could be tens of megabytes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gateway/protocol/server_frame.h"

namespace qim {
namespace {

MailboxSeq seq(uint64_t offset) {
  return compose(Epoch{1}, Offset{offset}).value();
}

// A message of `body_bytes` DEL bytes, each written as \u007f (6 bytes).
Message del_message(uint64_t id, size_t body_bytes) {
  Message m;
  m.id = MessageId{id};
  m.conversation = ConversationId::parse("d:alice:bob").value();
  m.sender = UserId::parse("alice").value();
  m.sender_device = DeviceId::parse("d1").value();
  m.client_msg_id = "c" + std::to_string(id);
  m.server_time_ms = 1'800'000'000'000;
  m.body = std::string(body_bytes, '\x7f');
  return m;
}

std::vector<MailboxEntry> del_entries(size_t n, size_t body_bytes) {
  std::vector<MailboxEntry> out;
  for (size_t i = 0; i < n; ++i)
    out.push_back(MailboxEntry{UserId::parse("bob").value(), seq(i + 1), del_message(i + 1, body_bytes)});
  return out;
}

size_t count(const std::string& text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// The decimal string after `"key":"` in `text`.
uint64_t u64_field(const std::string& text, const std::string& key) {
  const std::string k = "\"" + key + "\":\"";
  const size_t at = text.find(k);
  EXPECT_NE(at, std::string::npos) << key << " missing";
  return at == std::string::npos ? 0 : std::stoull(text.substr(at + k.size()));
}

TEST(MessageFrameBoundsTest, ASyncPageOfControlByteBodiesStaysWithinTheFrameBoundAndSaysMore) {
  MailboxPage page;
  page.entries = del_entries(500, 16 * 1024);  // 500 x ~96 KiB escaped: ~49 MB by count alone
  page.frontier = seq(500);
  const std::string frame = encode_sync_page("y1", page);
  EXPECT_LE(frame.size(), kMaxMessageFrameBytes);
  const size_t entries = count(frame, "\"seq\":");
  EXPECT_GE(entries, 1u);
  EXPECT_LT(entries, 500u);
  EXPECT_NE(frame.find("\"more\":true"), std::string::npos);
  // The entries written are the first ones, in order: the client pages on after the last.
  EXPECT_NE(frame.find("\"seq\":\"" + std::to_string(seq(entries).raw()) + "\""), std::string::npos);
  EXPECT_EQ(frame.find("\"seq\":\"" + std::to_string(seq(entries + 1).raw()) + "\""), std::string::npos);
  std::printf("500 entries of 16 KiB DEL bodies: %zu entries, %zu bytes in the first page\n", entries,
              frame.size());

  // A page that fits is unchanged, `more` as the store said.
  page.entries = del_entries(3, 100);
  EXPECT_NE(encode_sync_page("y2", page).find("\"more\":false"), std::string::npos);
}

TEST(MessageFrameBoundsTest, OneEntryAlwaysGoesEvenOverTheBound) {
  MailboxPage page;
  page.entries = del_entries(2, 64 * 1024);
  const std::string frame = encode_sync_page("", page, 4096);
  EXPECT_EQ(count(frame, "\"seq\":"), 1u);
  EXPECT_NE(frame.find("\"more\":true"), std::string::npos);
  // The largest entry the gateway accepts, escaped, fits the default bound with room to spare.
  EXPECT_LE(encode_sync_page("", page).size(), kMaxMessageFrameBytes);
}

TEST(MessageFrameBoundsTest, ALargePushIsSplitIntoDeliversThatChain) {
  const auto entries = del_entries(200, 16 * 1024);
  const MailboxSeq from = seq(0);
  const MailboxSeq frontier = seq(250);  // the range ends past the last entry
  const auto frames = encode_delivers(entries, from, frontier);
  ASSERT_GT(frames.size(), 1u);
  uint64_t expect_from = from.raw();
  size_t total = 0;
  for (const auto& f : frames) {
    EXPECT_LE(f.size(), kMaxMessageFrameBytes);
    const size_t n = count(f, "\"seq\":");
    EXPECT_GE(n, 1u);
    EXPECT_EQ(u64_field(f, "from"), expect_from);
    total += n;
    const uint64_t end = u64_field(f, "frontier");
    // Each frame holds every entry of its range: it ends at its last entry, the last one at the frontier.
    EXPECT_EQ(end, total == entries.size() ? frontier.raw() : entries[total - 1].seq.raw());
    expect_from = end;
  }
  EXPECT_EQ(total, entries.size());
  // A push without entries is still one frame.
  EXPECT_EQ(encode_delivers({}, from, frontier).size(), 1u);
}

TEST(MessageFrameBoundsTest, AHistoryPageIsCutByBytesAndNamesWhereToPageOnFrom) {
  HistoryPage page;
  for (uint64_t id = 200; id > 0; --id) page.messages.push_back(del_message(id, 16 * 1024));  // newest first
  const auto conversation = ConversationId::parse("d:alice:bob").value();
  const std::string frame = encode_history_page("h", conversation, page);
  EXPECT_LE(frame.size(), kMaxMessageFrameBytes);
  const size_t n = count(frame, "\"message_id\":");
  ASSERT_GE(n, 1u);
  EXPECT_LT(n, 200u);
  EXPECT_NE(frame.find("\"more\":true"), std::string::npos);
  EXPECT_EQ(u64_field(frame, "next_before"), page.messages[n - 1].id.value);

  // An empty page with more (a group reader that filtered every message it read) names its position.
  HistoryPage filtered;
  filtered.more = true;
  filtered.next_before = MessageId{77};
  const std::string empty = encode_history_page("h", conversation, filtered);
  EXPECT_EQ(u64_field(empty, "next_before"), 77u);
  // A page without more names none.
  HistoryPage last;
  last.messages.push_back(del_message(5, 10));
  EXPECT_EQ(encode_history_page("h", conversation, last).find("next_before"), std::string::npos);
}

}  // namespace
}  // namespace qim
