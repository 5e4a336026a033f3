#include "inbox/redis/redis_inbox_values.h"

#include "core/bytes.h"
#include "mailbox/redis/redis_keys.h"

namespace qim {

namespace {
constexpr size_t kHexBytes = 16;
}  // namespace

std::string encode_inbox_value(const InboxEntryRef& ref, int64_t expires_ms) {
  ByteWriter w;
  w.i64(expires_ms);
  w.u8(ref.counts ? 1 : 0);
  w.u64(ref.message.value);
  w.i64(ref.server_time_ms);
  w.str(ref.sender.str());
  w.str(ref.preview);
  return w.take();
}

Result<StoredInboxValue> decode_inbox_value(std::string_view bytes) {
  ByteReader r(bytes, "inbox index row");
  StoredInboxValue out;
  QIM_ASSIGN_OR_RETURN(out.expires_ms, r.i64("expires_ms"));
  QIM_ASSIGN_OR_RETURN(uint8_t counts, r.u8("counts"));
  if (counts > 1) return r.corrupt("counts", "neither 0 nor 1");
  out.ref.counts = counts == 1;
  QIM_ASSIGN_OR_RETURN(out.ref.message.value, r.u64("message"));
  QIM_ASSIGN_OR_RETURN(out.ref.server_time_ms, r.i64("server_time_ms"));
  QIM_ASSIGN_OR_RETURN(out.ref.sender, r.name<UserId>("sender"));
  QIM_ASSIGN_OR_RETURN(out.ref.preview, r.str("preview", kPreviewBytes));
  QIM_RETURN_IF_ERROR(r.finish());
  return out;
}

Result<StoredInboxValue> decode_inbox_row(std::string_view bytes) {
  if (bytes.size() < kHexBytes) {
    return Error(Errc::kCorruptEntry,
                 "inbox conversation row of " + std::to_string(bytes.size()) + " bytes has no seq");
  }
  QIM_ASSIGN_OR_RETURN(MailboxSeq seq, parse_seq_hex(bytes.substr(0, kHexBytes)));
  QIM_ASSIGN_OR_RETURN(StoredInboxValue out, decode_inbox_value(bytes.substr(kHexBytes)));
  out.ref.seq = seq;
  return out;
}

std::string encode_setting(int64_t version, std::string_view value) {
  return seq_hex(MailboxSeq::from_raw(static_cast<uint64_t>(version))) + std::string(value);
}

Result<std::string> decode_setting_value(std::string_view bytes) {
  if (bytes.size() < kHexBytes) {
    return Error(Errc::kCorruptEntry,
                 "inbox setting of " + std::to_string(bytes.size()) + " bytes has no version");
  }
  QIM_RETURN_IF_ERROR(parse_seq_hex(bytes.substr(0, kHexBytes)));
  return std::string(bytes.substr(kHexBytes));
}

std::string message_id_hex(MessageId id) {
  return seq_hex(MailboxSeq::from_raw(id.value));
}

Result<MessageId> parse_message_id_hex(std::string_view hex) {
  QIM_ASSIGN_OR_RETURN(MailboxSeq raw, parse_seq_hex(hex));
  return MessageId{raw.raw()};
}

}  // namespace qim
