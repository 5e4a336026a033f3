#include "mailbox/embedded/rows.h"

#include "core/bytes.h"
#include "mailbox/dispatch.h"
#include "mailbox/message_codec.h"

namespace qim::embedded {

namespace {

constexpr uint8_t kIdentityVersion = 1;
constexpr uint64_t kSignBit = uint64_t{1} << 63;

void put_be(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t get_be(std::string_view in, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(in[i]);
  return v;
}

Error corrupt(std::string_view what, const std::string& why) {
  return Error(Errc::kCorruptEntry, std::string(what) + ": " + why);
}

}  // namespace

std::string u64_value(uint64_t v) {
  ByteWriter w;
  w.u64(v);
  return w.take();
}

Result<uint64_t> decode_u64_value(std::string_view bytes, std::string_view what) {
  ByteReader r(bytes, what);
  QIM_ASSIGN_OR_RETURN(uint64_t v, r.u64("value"));
  QIM_RETURN_IF_ERROR(r.finish());
  return v;
}

std::string identity_key(ShardId shard, Epoch epoch, const DispatchId& id) {
  std::string k;
  put_be(k, shard.value, 4);
  put_be(k, epoch.value, 4);
  k.append(id.str());
  return k;
}

std::string identity_value(const StoredIdentity& stored, int64_t expires_ms) {
  ByteWriter w;
  w.u8(kIdentityVersion);
  w.i64(expires_ms);
  w.u64(stored.canonical_offset.value);
  w.u64(stored.identity.digest);
  w.str(encode_manifest(stored.identity.manifest));
  return w.take();
}

namespace {

Result<int64_t> read_identity_head(ByteReader& r) {
  QIM_ASSIGN_OR_RETURN(uint8_t version, r.u8("version"));
  if (version != kIdentityVersion) return r.corrupt("version", "unknown version " + std::to_string(version));
  return r.i64("expires_ms");
}

}  // namespace

Result<IdentityRow> decode_identity(const DispatchId& id, std::string_view value) {
  const std::string what = "identity row of " + id.str();  // ByteReader keeps a view of it
  ByteReader r(value, what);
  IdentityRow row;
  QIM_ASSIGN_OR_RETURN(row.expires_ms, read_identity_head(r));
  QIM_ASSIGN_OR_RETURN(row.stored.canonical_offset.value, r.u64("canonical_offset"));
  if (row.stored.canonical_offset.value > kMaxOffset) return r.corrupt("canonical_offset", "above 2^48");
  QIM_ASSIGN_OR_RETURN(row.stored.identity.digest, r.u64("digest"));
  QIM_ASSIGN_OR_RETURN(std::string manifest, r.str("manifest", 4 * (kMaxChunks + 1)));
  QIM_RETURN_IF_ERROR(r.finish());
  auto decoded = decode_manifest(manifest);
  if (!decoded.ok()) return r.corrupt("manifest", decoded.error().message());
  row.stored.identity.id = id;
  row.stored.identity.manifest = std::move(decoded).value();
  return row;
}

Result<int64_t> identity_expiry(std::string_view value) {
  ByteReader r(value, "identity row");
  return read_identity_head(r);
}

std::string frontier_prefix(ShardId shard) {
  std::string k;
  put_be(k, shard.value, 4);
  return k;
}

std::string frontier_key(ShardId shard, Epoch epoch) {
  std::string k = frontier_prefix(shard);
  put_be(k, epoch.value, 4);
  return k;
}

Result<MailboxSeq> decode_frontier(std::string_view key, std::string_view value) {
  if (key.size() != 8) return corrupt("frontier row", "key of " + std::to_string(key.size()) + " bytes");
  const std::string what = "frontier row of shard " + std::to_string(get_be(key, 4));
  const uint64_t epoch = get_be(key.substr(4), 4);
  if (epoch > kMaxEpoch) return corrupt(what, "epoch " + std::to_string(epoch) + " above 2^16");
  QIM_ASSIGN_OR_RETURN(uint64_t offset, decode_u64_value(value, what));
  if (offset > kMaxOffset) return corrupt(what, "offset " + std::to_string(offset) + " above 2^48");
  return compose(Epoch{static_cast<uint32_t>(epoch)}, Offset{offset});
}

std::string user_prefix(const UserId& user) {
  std::string k;
  k.push_back(static_cast<char>(user.str().size()));  // ids are at most 64 bytes
  k.append(user.str());
  return k;
}

std::string entry_key(const UserId& user, MailboxSeq seq) {
  std::string k = user_prefix(user);
  put_be(k, seq.raw(), 8);
  return k;
}

std::string entry_value(const Message& message, int64_t expires_ms) {
  ByteWriter w;
  w.i64(expires_ms);
  std::string out = w.take();
  out.append(encode_message(message));
  return out;
}

Result<int64_t> entry_expiry(std::string_view value) {
  ByteReader r(value.substr(0, 8), "entry row");
  return r.i64("expires_ms");
}

Result<MailboxSeq> entry_seq(std::string_view key, size_t prefix_size) {
  if (key.size() != prefix_size + 8) {
    return corrupt("entry row", "key of " + std::to_string(key.size()) + " bytes, expected " +
                                    std::to_string(prefix_size + 8));
  }
  return MailboxSeq::from_raw(get_be(key.substr(prefix_size), 8));
}

Result<Message> entry_message(std::string_view value) {
  if (value.size() < 8) return corrupt("entry row", "value of " + std::to_string(value.size()) + " bytes");
  return decode_message(value.substr(8));
}

std::string proof_prefix(const UserId& user, DayBucket day) {
  std::string k = user_prefix(user);
  put_be(k, static_cast<uint64_t>(day.value) ^ kSignBit, 8);  // signed days sort in order
  return k;
}

std::string proof_key(const UserId& user, DayBucket day, Epoch epoch) {
  std::string k = proof_prefix(user, day);
  put_be(k, epoch.value, 4);
  return k;
}

std::string ledger_key(const UserId& user) {
  return user.str();
}

std::string ledger_value(const RetentionLedger& ledger) {
  ByteWriter w;
  w.u64(ledger.trim.raw());
  w.u32(static_cast<uint32_t>(ledger.live_buckets.size()));
  for (DayBucket b : ledger.live_buckets) w.i64(b.value);
  return w.take();
}

Result<RetentionLedger> decode_ledger(std::string_view value) {
  ByteReader r(value, "retention ledger");
  RetentionLedger ledger;
  QIM_ASSIGN_OR_RETURN(uint64_t trim, r.u64("trim"));
  ledger.trim = MailboxSeq::from_raw(trim);
  QIM_ASSIGN_OR_RETURN(uint32_t n, r.u32("bucket_count"));
  if (n > value.size() / 8) return r.corrupt("bucket_count", std::to_string(n) + " out of bounds");
  for (uint32_t i = 0; i < n; ++i) {
    QIM_ASSIGN_OR_RETURN(int64_t day, r.i64("bucket"));
    if (!ledger.live_buckets.empty() && day <= ledger.live_buckets.back().value)
      return r.corrupt("bucket", "days out of order");
    ledger.live_buckets.push_back(DayBucket{day});
  }
  QIM_RETURN_IF_ERROR(r.finish());
  return ledger;
}

std::string ledger_users_prefix(ShardId shard) {
  return frontier_prefix(shard);  // the same 4 big-endian bytes
}

std::string ledger_user_key(ShardId shard, std::string_view user) {
  std::string k = ledger_users_prefix(shard);
  k.append(user);
  return k;
}

}  // namespace qim::embedded
