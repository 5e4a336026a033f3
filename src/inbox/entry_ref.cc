#include "inbox/entry_ref.h"

#include "inbox/unread_rule.h"

namespace qim {

std::string preview_of(std::string_view body, size_t max_bytes) {
  if (body.size() <= max_bytes) return std::string(body);
  size_t end = max_bytes;
  // Back up over continuation bytes (10xxxxxx) so the cut falls before a character's first byte.
  while (end > 0 && (static_cast<unsigned char>(body[end]) & 0xC0) == 0x80) --end;
  return std::string(body.substr(0, end));
}

InboxEntryRef inbox_ref_of(const MailboxEntry& entry) {
  InboxEntryRef ref;
  ref.seq = entry.seq;
  ref.message = entry.message.id;
  ref.sender = entry.message.sender;
  ref.server_time_ms = entry.message.server_time_ms;
  ref.counts = counts_as_unread(entry);
  ref.preview = preview_of(entry.message.body);
  return ref;
}

}  // namespace qim
