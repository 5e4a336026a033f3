#pragma once
// The rows of the embedded inbox (RocksDB: column families of the mailbox's own database, named and
// configured in mailbox/embedded/side_rows.h; docs/adr/0088). Keys are big-endian
// so bytewise order is the order read; a name (user, conversation) is a length byte and its bytes, so one
// name's rows never interleave with another's.
//
//   family          key                          value
//   inbox_index     user | conversation | seq    ref (below)                       put; expires
//   inbox_rows      user | conversation          ref of the highest seq            merge Max16; expires
//   inbox_marks     user | conversation          seq u64 | 0 u64                   merge Max16
//   inbox_receipts  conversation | user          message id u64 | 0 u64            merge Max16
//   inbox_settings  user | setting key           version u64 | 0 u64 | value       merge Max16
//   inbox_activity  user | seq | conversation    ref of the row at that seq         put; expires
//
// inbox_activity (docs/adr/0089) holds one position per row written, in the row's batch, ordered by seq
// under the user: the conversation list reads it newest first. A position below its conversation's row is
// stale: readers skip it and delete it (the conversation bytes end the key, unprefixed).
//
//   ref = seq u64 | expires_ms u64 | counts u8 | message id u64 | server time u64 | sender (name) | preview
//
// Every merged value starts with 16 bytes compared bytewise (Max16Merge): (seq, expiry) for a row, so a
// replay of the same seq refreshes its expiry like the index's put; (seq, 0) for a mark; (id, 0) for a
// receipt; (version, 0) for a setting (embedded::Max16Merge). Decoders return CorruptEntry naming the bad
// field.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "inbox/inbox_backend.h"

namespace qim::inbox_rows {

void put_name(std::string& out, std::string_view name);
std::string pair_prefix(std::string_view first, std::string_view second);  // name | name
std::string index_key(const UserId& user, const ConversationId& c, MailboxSeq seq);
// The seq of an index key whose (user, conversation) prefix is `prefix_size` bytes.
Result<MailboxSeq> index_key_seq(std::string_view key, size_t prefix_size);
// The second name of a pair key (the conversation of a row or mark key, the user of a receipt key) and
// what follows it in a settings key, after a first name.
Result<std::string> second_name(std::string_view key);
Result<std::string> after_first_name(std::string_view key);

std::string activity_key(const UserId& user, MailboxSeq seq, const ConversationId& c);
// The seq and conversation of an activity key whose user prefix is `prefix_size` bytes.
Result<ActivityPosition> activity_position(std::string_view key, size_t prefix_size);

std::string ref_value(const InboxEntryRef& ref, int64_t expires_ms);
Result<InboxEntryRef> decode_ref(std::string_view value);
// Only the expiry / the counts flag, without decoding the rest.
Result<int64_t> ref_expiry(std::string_view value);
Result<bool> ref_counts(std::string_view value);

std::string max16_value(uint64_t first, std::string_view rest = {});  // first u64 | 0 u64 | rest
Result<uint64_t> max16_first(std::string_view value, std::string_view what);

}  // namespace qim::inbox_rows
