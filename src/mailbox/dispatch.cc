#include "mailbox/dispatch.h"

#include <xxhash.h>

#include <cstring>

namespace qim {

Status validate_manifest(const Manifest& manifest) {
  if (manifest.entry_counts.size() > kMaxChunks) {
    return Error(Errc::kInvalidArgument, "manifest has " + std::to_string(manifest.entry_counts.size()) +
                                             " chunks, over the limit of " + std::to_string(kMaxChunks));
  }
  for (size_t i = 0; i < manifest.entry_counts.size(); ++i) {
    const uint32_t n = manifest.entry_counts[i];
    if (n == 0 || n > kMaxChunkEntries) {
      return Error(Errc::kInvalidArgument, "manifest chunk " + std::to_string(i) + " has " +
                                               std::to_string(n) + " entries; a chunk holds 1.." +
                                               std::to_string(kMaxChunkEntries));
    }
  }
  return {};
}

namespace {

void hash_str(XXH3_state_t* st, const std::string& s) {
  const uint64_t n = s.size();
  XXH3_64bits_update(st, &n, sizeof n);
  XXH3_64bits_update(st, s.data(), s.size());
}

void hash_u64(XXH3_state_t* st, uint64_t v) {
  XXH3_64bits_update(st, &v, sizeof v);
}

}  // namespace

DispatchIdentity make_identity(DispatchId id, const Message& message,
                               const std::vector<std::vector<UserId>>& chunks,
                               std::span<const UserId> former_recipients) {
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  hash_u64(st, message.id.value);
  hash_str(st, message.conversation.str());
  hash_str(st, message.sender.str());
  hash_str(st, message.sender_device.str());
  hash_str(st, message.client_msg_id);
  hash_u64(st, static_cast<uint64_t>(message.server_time_ms));
  hash_str(st, message.body);
  // Only a reply's: a plain message's digest is what it was before replies (docs/adr/0125).
  if (message.reply_to) hash_u64(st, message.reply_to->value);
  Manifest manifest;
  for (const auto& chunk : chunks) {
    manifest.entry_counts.push_back(static_cast<uint32_t>(chunk.size()));
    hash_u64(st, chunk.size());
    for (const auto& u : chunk) hash_str(st, u.str());
  }
  // After a marker no chunk count can take (counts are at most kMaxChunkEntries), so a record with former
  // recipients never digests as one without (docs/adr/0160).
  if (!former_recipients.empty()) {
    hash_u64(st, UINT64_MAX);
    hash_u64(st, former_recipients.size());
    for (const auto& u : former_recipients) hash_str(st, u.str());
  }
  const uint64_t digest = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return DispatchIdentity{std::move(id), digest, std::move(manifest)};
}

// Manifest bytes: u32 chunk count, then one little-endian u32 per chunk.
std::string encode_manifest(const Manifest& manifest) {
  std::string out;
  auto put = [&out](uint32_t v) {
    char b[4];
    std::memcpy(b, &v, 4);
    out.append(b, 4);
  };
  put(static_cast<uint32_t>(manifest.entry_counts.size()));
  for (uint32_t n : manifest.entry_counts) put(n);
  return out;
}

Result<Manifest> decode_manifest(std::string_view bytes) {
  auto get = [&bytes](size_t i) {
    uint32_t v;
    std::memcpy(&v, bytes.data() + 4 * i, 4);
    return v;
  };
  if (bytes.size() < 4 || bytes.size() % 4 != 0) {
    return Error(Errc::kCorruptEntry, "manifest of " + std::to_string(bytes.size()) + " bytes is malformed");
  }
  const uint32_t n = get(0);
  if (bytes.size() != 4 * (size_t{n} + 1)) {
    return Error(Errc::kCorruptEntry, "manifest says " + std::to_string(n) + " chunks but holds " +
                                          std::to_string(bytes.size() / 4 - 1));
  }
  Manifest m;
  for (uint32_t i = 0; i < n; ++i) m.entry_counts.push_back(get(i + 1));
  return m;
}

}  // namespace qim
