#pragma once
// Byte encodings of the values the Redis store keeps (keys in redis_keys.h). Decoders return
// CorruptEntry naming the bad field.

#include <cstdint>
#include <string>
#include <string_view>

#include "mailbox/store_backend.h"

namespace qim {

// A dispatch identity: u8 version, u64 digest, u64 canonical offset, manifest (encode_manifest), LE.
std::string encode_identity_value(const DispatchIdentity& identity, Offset canonical);
Result<StoredIdentity> decode_identity_value(const DispatchId& id, std::string_view bytes);

// An entry: u64 expiry (ms since the Unix epoch, LE) then encode_message(). The expiry leads so the
// read script can filter expired entries without decoding the message (Redis has no per-member TTL).
struct StoredEntryValue {
  int64_t expires_ms = 0;
  Message message;
};
std::string encode_entry_value(const Message& message, int64_t expires_ms);
Result<StoredEntryValue> decode_entry_value(std::string_view bytes);

}  // namespace qim
