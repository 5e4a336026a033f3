#include "gateway/reply_quotes.h"

#include <optional>
#include <set>
#include <vector>

#include "attachments/message_body.h"

namespace qim {

namespace {

// The code point at `at` and its length in bytes; nullopt (length 1) for a byte that starts no valid
// UTF-8 sequence.
std::optional<uint32_t> next_code_point(std::string_view s, size_t at, size_t& length) {
  const auto b = static_cast<unsigned char>(s[at]);
  length = 1;
  if (b < 0x80) return b;
  size_t n = 0;
  uint32_t c = 0;
  if ((b & 0xE0) == 0xC0) {
    n = 2;
    c = b & 0x1F;
  } else if ((b & 0xF0) == 0xE0) {
    n = 3;
    c = b & 0x0F;
  } else if ((b & 0xF8) == 0xF0) {
    n = 4;
    c = b & 0x07;
  } else {
    return std::nullopt;
  }
  if (at + n > s.size()) return std::nullopt;
  for (size_t i = 1; i < n; ++i) {
    const auto cont = static_cast<unsigned char>(s[at + i]);
    if ((cont & 0xC0) != 0x80) return std::nullopt;
    c = (c << 6) | (cont & 0x3F);
  }
  length = n;
  return c;
}

// Whether `c` extends the character before it rather than starting one.
bool extends(uint32_t c) {
  return (c >= 0x0300 && c <= 0x036F) || (c >= 0x1AB0 && c <= 0x1AFF) || (c >= 0x1DC0 && c <= 0x1DFF) ||
         (c >= 0x20D0 && c <= 0x20FF) || (c >= 0xFE20 && c <= 0xFE2F) ||    // combining marks
         (c >= 0xFE00 && c <= 0xFE0F) || (c >= 0xE0100 && c <= 0xE01EF) ||  // variation selectors
         (c >= 0x1F3FB && c <= 0x1F3FF) ||                                  // skin tones
         (c >= 0xE0020 && c <= 0xE007F) ||                                  // tags
         (c >= 0x1160 && c <= 0x11FF) || (c >= 0xD7B0 && c <= 0xD7FF) ||    // Hangul V and T jamo
         c == 0x200D;                                                       // ZWJ
}

bool regional_indicator(uint32_t c) {
  return c >= 0x1F1E6 && c <= 0x1F1FF;
}

}  // namespace

std::string cut_characters(std::string_view text, size_t max, bool& truncated) {
  truncated = false;
  size_t characters = 0;
  size_t at = 0;
  std::optional<uint32_t> previous;
  bool open_flag = false;  // a regional indicator waiting for its pair
  while (at < text.size()) {
    size_t length = 1;
    const std::optional<uint32_t> c = next_code_point(text, at, length);
    bool starts = true;
    if (c && previous) {
      if (extends(*c) || *previous == 0x200D) starts = false;
      if (*previous == '\r' && *c == '\n') starts = false;
      if (open_flag && regional_indicator(*c)) starts = false;
    }
    if (starts) {
      if (characters == max) {
        truncated = true;
        return std::string(text.substr(0, at));
      }
      ++characters;
      open_flag = c && regional_indicator(*c);
    } else if (c && regional_indicator(*c)) {
      open_flag = false;  // the pair is complete
    }
    previous = c;
    at += length;
  }
  return std::string(text);
}

Result<std::map<uint64_t, ReplyQuote>> quote_entries(HistoryStore* history, MessageStateStore* messages,
                                                     std::span<const MailboxEntry> entries) {
  std::map<uint64_t, ReplyQuote> quotes;
  if (history == nullptr) return quotes;
  // A replied message among the entries is quoted from here (it was just sent: maybe not archived yet).
  std::vector<Message> unique;
  std::set<uint64_t> seen;
  bool replies = false;
  for (const MailboxEntry& e : entries) {
    if (!seen.insert(e.message.id.value).second) continue;
    unique.push_back(e.message);
    replies = replies || e.message.reply_to.has_value();
  }
  if (!replies) return quotes;
  QIM_RETURN_IF_ERROR(quote_messages(*history, messages, unique, quotes));
  return quotes;
}

Status quote_replies(HistoryStore& history, MessageStateStore* messages, HistoryPage& page) {
  return quote_messages(history, messages, page.messages, page.quotes);
}

Status quote_messages(HistoryStore& history, MessageStateStore* messages, std::span<const Message> page,
                      std::map<uint64_t, ReplyQuote>& quotes) {
  std::vector<MessageId> targets;
  for (const Message& m : page)
    if (m.reply_to) targets.push_back(*m.reply_to);
  if (targets.empty()) return {};
  std::vector<std::optional<MessageState>> states(targets.size());
  if (messages != nullptr) {
    QIM_ASSIGN_OR_RETURN(states, messages->load_many(targets));
  }
  size_t i = 0;
  for (const Message& m : page) {
    if (!m.reply_to) continue;
    const std::optional<MessageState>& state = states[i++];
    ReplyQuote q;
    q.message_id = *m.reply_to;
    if (state && state->recalled()) {
      q.recalled = true;
      q.sender = state->sender;
      quotes[m.id.value] = std::move(q);
      continue;
    }
    std::optional<Message> target;
    for (const Message& in_page : page) {
      if (in_page.id == *m.reply_to) target = in_page;
    }
    if (!target) {
      QIM_ASSIGN_OR_RETURN(auto one,
                           history.read(HistoryQuery{m.conversation, MessageId{m.reply_to->value + 1}, 1}));
      if (!one.messages.empty() && one.messages.front().id == *m.reply_to) target = one.messages.front();
    }
    // A row without a body is a recall's tombstone (the state says so too, unless it was not read).
    if (!target || target->body.empty()) {
      q.unavailable = !target;
      q.recalled = target.has_value();
      if (target) q.sender = target->sender;
      quotes[m.id.value] = std::move(q);
      continue;
    }
    q.sender = target->sender;
    std::string_view text = target->body;
    auto with_attachments = attachments::decode_message_body(target->body);
    if (with_attachments) {  // its caption, not the server's JSON
      q.attachments = static_cast<uint32_t>(with_attachments->attachments.size());
      text = with_attachments->text;
    }
    q.body = cut_characters(text, kQuoteCharacters, q.truncated);
    quotes[m.id.value] = std::move(q);
  }
  return {};
}

}  // namespace qim
