#pragma once
// What every inbox backend keeps of an entry it is handed (InboxEntryRef), made in one place so that every
// engine stores the same preview and the same unread flag.

#include <string>
#include <string_view>

#include "inbox/inbox_backend.h"

namespace qim {

// The first `max_bytes` of `body`, cut back to a UTF-8 character boundary (never half a character).
std::string preview_of(std::string_view body, size_t max_bytes = kPreviewBytes);

// The index row of `entry`: seq, message id, sender, time, counts_as_unread (unread_rule.h), preview.
InboxEntryRef inbox_ref_of(const MailboxEntry& entry);

}  // namespace qim
