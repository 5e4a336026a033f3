#pragma once
// What a reaction is (issue 39 item 4, docs/adr/0124-reactions-as-message-events.md): the one rule that
// says which strings are reactions, and the bounds per message and per user. decide_event
// (message_state.h) applies them at the event's Outbox offset, so a replay decides the same.

#include <cstddef>
#include <string_view>

namespace qim {

inline constexpr size_t kMaxReactionBytes = 64;           // a frame's 'emoji' field, before the rule
inline constexpr size_t kMaxReactionsPerMessage = 20;     // distinct reactions one message holds
inline constexpr size_t kMaxReactionsPerUserMessage = 3;  // distinct reactions of one user on one message

// True iff `reaction` is either
//  - a short code: ':' then 1..32 of [a-z0-9_+-] then ':' (":thumbs_up:", ":+1:"), or
//  - one emoji grapheme in UTF-8 (at most 8 code points, kMaxReactionBytes): an emoji base code point
//    (the pictographic blocks U+1F000..U+1FAFF, U+2600..U+27BF, U+2300..U+23FF, U+2B00..U+2BFF, a few
//    single ones such as U+00A9 U+00AE U+203C U+2122 U+3030), a pair of regional indicators (a flag), or a
//    keycap ([0-9#*] U+FE0F? U+20E3); followed only by variation selectors (U+FE0E, U+FE0F), skin-tone
//    modifiers (U+1F3FB..U+1F3FF), tag characters (U+E0020..U+E007F, subdivision flags), or U+200D (ZWJ)
//    joined to a further emoji base.
// A documented rule rather than the Unicode segmentation tables (no ICU): it accepts every emoji of the
// RGI list this way and no text, control or invisible-only string.
bool valid_reaction(std::string_view reaction);

}  // namespace qim
