#include "mailbox/redis/redis_values.h"

#include "core/bytes.h"
#include "mailbox/message_codec.h"

namespace qim {

namespace {
constexpr uint8_t kIdentityVersion = 1;
constexpr size_t kMaxManifestBytes = 4 * (kMaxChunks + 1);
}  // namespace

std::string encode_identity_value(const DispatchIdentity& identity, Offset canonical) {
  ByteWriter w;
  w.u8(kIdentityVersion);
  w.u64(identity.digest);
  w.u64(canonical.value);
  w.str(encode_manifest(identity.manifest));
  return w.take();
}

Result<StoredIdentity> decode_identity_value(const DispatchId& id, std::string_view bytes) {
  const std::string what = "dispatch identity " + id.str();  // outlives the reader, which keeps a view
  ByteReader r(bytes, what);
  QIM_ASSIGN_OR_RETURN(uint8_t version, r.u8("version"));
  if (version != kIdentityVersion) return r.corrupt("version", "unknown version " + std::to_string(version));
  StoredIdentity out;
  out.identity.id = id;
  QIM_ASSIGN_OR_RETURN(out.identity.digest, r.u64("digest"));
  QIM_ASSIGN_OR_RETURN(out.canonical_offset.value, r.u64("canonical_offset"));
  QIM_ASSIGN_OR_RETURN(std::string manifest, r.str("manifest", kMaxManifestBytes));
  QIM_RETURN_IF_ERROR(r.finish());
  if (!check_offset(out.canonical_offset).ok()) return r.corrupt("canonical_offset", "not below 2^48");
  QIM_ASSIGN_OR_RETURN(out.identity.manifest, decode_manifest(manifest));
  return out;
}

std::string encode_entry_value(const Message& message, int64_t expires_ms) {
  ByteWriter w;
  w.i64(expires_ms);
  return w.take() + encode_message(message);
}

Result<StoredEntryValue> decode_entry_value(std::string_view bytes) {
  ByteReader r(bytes, "mailbox entry");
  StoredEntryValue out;
  QIM_ASSIGN_OR_RETURN(out.expires_ms, r.i64("expires_ms"));
  QIM_ASSIGN_OR_RETURN(out.message, decode_message(bytes.substr(sizeof(int64_t))));
  return out;
}

}  // namespace qim
