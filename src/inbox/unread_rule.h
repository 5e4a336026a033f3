#pragma once
// What counts toward a user's unread (docs/adr/0068-inbox-beside-the-mailbox.md), decided once here and
// stored with each index row (InboxEntryRef::counts) when the entry is written, so every backend and every
// reader counts alike.
//
// An entry of `entry.user`'s mailbox counts iff its sender is not that user (a user's own messages, from
// any device, are never unread to them) and it is not a system entry. A system entry's client_msg_id
// starts with kSystemClientIdPrefix ('~'): group operations today (membership changes); later kinds of
// issue 39 (edits, recalls, reactions) take the same prefix. System entries still raise the conversation
// row (activity and preview) but never count.

#include <string_view>

#include "mailbox/message.h"

namespace qim {

inline constexpr std::string_view kSystemClientIdPrefix = "~";

// True iff `client_msg_id` marks a system entry.
bool is_system_entry(const Message& message);

// True iff `entry` counts toward its mailbox user's unread.
bool counts_as_unread(const MailboxEntry& entry);

}  // namespace qim
