#pragma once
// Byte encodings of what the Redis inbox keeps (keys in redis_inbox_keys.h). Decoders return CorruptEntry
// naming the bad field.

#include <cstdint>
#include <string>
#include <string_view>

#include "inbox/inbox_backend.h"

namespace qim {

// An index row's value: u64 LE expiry ms, u8 counts, u64 LE message id, i64 LE server time, the sender
// (u32 length + bytes), the preview (u32 length + bytes). The expiry leads so the scripts read it without
// decoding the rest (Redis has no per-member TTL; the mailbox's entry values lead with theirs too). The
// seq is the member, not part of the value.
std::string encode_inbox_value(const InboxEntryRef& ref, int64_t expires_ms);
struct StoredInboxValue {
  int64_t expires_ms = 0;
  InboxEntryRef ref;  // ref.seq left zero: the caller sets it from the member
};
Result<StoredInboxValue> decode_inbox_value(std::string_view bytes);

// A conversation row: the seq as 16 hex digits (so the raise script compares it), then the index value.
Result<StoredInboxValue> decode_inbox_row(std::string_view bytes);

// A setting cell: the version as 16 hex digits, then the value.
std::string encode_setting(int64_t version, std::string_view value);
Result<std::string> decode_setting_value(std::string_view bytes);

// 16 lowercase hex digits of a message id (fixed width: ordered as text as by value).
std::string message_id_hex(MessageId id);
Result<MessageId> parse_message_id_hex(std::string_view hex);

}  // namespace qim
