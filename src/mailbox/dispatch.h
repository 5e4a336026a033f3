#pragma once
// A dispatch record: what fanout writes for one message and one shard, and its identity.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/mailbox_seq.h"
#include "core/sharding.h"
#include "mailbox/message.h"

namespace qim {

inline constexpr size_t kMaxChunks = 1024;
inline constexpr size_t kMaxChunkEntries = 1024;
// Former recipients one record names at most (DispatchRecord::former_recipients, docs/adr/0160): with the
// longest names (64 bytes) 68 KiB, so a record of kMaxRecipientsPerDispatch recipients, the largest body
// and this many stays under the logs' record bound.
inline constexpr size_t kMaxFormerRecipients = 1024;

// The chunks of a record: chunk i holds entry_counts[i] recipient entries.
struct Manifest {
  std::vector<uint32_t> entry_counts;

  size_t chunk_count() const { return entry_counts.size(); }
  bool operator==(const Manifest&) const = default;
};

// Who a dispatch is: first writer wins on (shard, epoch, id); same id with another digest or manifest
// is a DispatchConflict.
struct DispatchIdentity {
  DispatchId id;
  uint64_t digest = 0;  // XXH3-64 of the record's payload (message and recipients)
  Manifest manifest;

  bool operator==(const DispatchIdentity&) const = default;
};

// The full record as it travels on the mailbox log.
struct DispatchRecord {
  DispatchIdentity identity;
  Message message;
  std::vector<std::vector<UserId>> chunks;  // recipients, chunk by chunk; sizes match the manifest
  // A recall's record only (docs/adr/0160): users of the record's shard who received the recalled SEND or
  // one of its named edits and are no longer members at the recall's offset. The node redacts their
  // entries with the recipients' and writes them no entry. Sorted, distinct, none of them a recipient, at
  // most kMaxFormerRecipients. A record may then have no chunk (no recipient in the shard).
  std::vector<UserId> former_recipients;
};

// InvalidArgument for an empty chunk, or counts over kMaxChunks / kMaxChunkEntries. An empty manifest is
// valid: a record that writes no entry (a recall's record naming only former recipients, decision 160).
Status validate_manifest(const Manifest& manifest);

// Builds the identity of a record from its message and recipient chunks (digest over both) and its
// former recipients (in the digest only when there are any: a record without is digested as before).
DispatchIdentity make_identity(DispatchId id, const Message& message,
                               const std::vector<std::vector<UserId>>& chunks,
                               std::span<const UserId> former_recipients = {});

// Byte encodings for storage and the log. decode_* return CorruptEntry on malformed input.
std::string encode_manifest(const Manifest& manifest);
Result<Manifest> decode_manifest(std::string_view bytes);

}  // namespace qim
