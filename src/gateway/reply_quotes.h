#pragma once
// The quote a reply carries of the message it replies to (docs/adr/0125): computed when it is read, in the
// replied message's current state, never stored (a stored quote would go stale on an edit and keep a
// recalled body alive in every reply). A plain message reads nothing.

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "archiver/history_store.h"
#include "lifecycle/message_state_store.h"

namespace qim {

inline constexpr size_t kQuoteCharacters = 100;

// `text` cut to at most `max` user-perceived characters, on a character boundary; `truncated` set when
// cut. A character is a base code point with what extends it (a documented rule, not the Unicode tables:
// no ICU): combining marks (U+0300..U+036F, U+1AB0..U+1AFF, U+1DC0..U+1DFF, U+20D0..U+20FF,
// U+FE20..U+FE2F), variation selectors, emoji skin tones, tag characters, Hangul jamo vowels and trailing
// consonants, U+200D (ZWJ) with the code point it joins, a regional-indicator pair (a flag), CR LF. Bytes
// that are no UTF-8 count one character each, never split.
std::string cut_characters(std::string_view text, size_t max, bool& truncated);

// Fills page.quotes for the replies of `page` (a message with reply_to): the replied message's state from
// `messages` (null: not read; recalled → recalled, no body) and otherwise its current history row from
// `history` (within the page when it is there; absent → unavailable). One state read for the page's
// replies and one history read per replied message not in the page. The stores' errors.
Status quote_replies(HistoryStore& history, MessageStateStore* messages, HistoryPage& page);
// The quotes of the replies among mailbox `entries` (a DELIVER's, a SYNC_PAGE's), by the reply's id; each
// message once (entries of several users repeat it). Empty, reading nothing, without `history` or when no
// entry is a reply.
Result<std::map<uint64_t, ReplyQuote>> quote_entries(HistoryStore* history, MessageStateStore* messages,
                                                     std::span<const MailboxEntry> entries);
// The same for any messages: `quotes` gains the quote of each reply among
// `messages`, by the reply's id; the replied message is read from the stores (and `messages`).
Status quote_messages(HistoryStore& history, MessageStateStore* messages, std::span<const Message> replies,
                      std::map<uint64_t, ReplyQuote>& quotes);

}  // namespace qim
