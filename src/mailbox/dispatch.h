#pragma once
// A dispatch record: what fanout writes for one message and one shard, and its identity.

#include <cstdint>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/mailbox_seq.h"
#include "core/sharding.h"
#include "mailbox/message.h"

namespace qim {

inline constexpr size_t kMaxChunks = 1024;
inline constexpr size_t kMaxChunkEntries = 1024;

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
};

// InvalidArgument for an empty manifest, an empty chunk, or counts over kMaxChunks / kMaxChunkEntries.
Status validate_manifest(const Manifest& manifest);

// Builds the identity of a record from its message and recipient chunks (digest over both).
DispatchIdentity make_identity(DispatchId id, const Message& message,
                               const std::vector<std::vector<UserId>>& chunks);

// Byte encodings for storage and the log. decode_* return CorruptEntry on malformed input.
std::string encode_manifest(const Manifest& manifest);
Result<Manifest> decode_manifest(std::string_view bytes);

}  // namespace qim
