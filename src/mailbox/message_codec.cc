#include "mailbox/message_codec.h"

#include "core/bytes.h"
#include "mailbox/redaction.h"

namespace qim {

namespace {

constexpr uint8_t kMessageVersion = 1;
constexpr uint8_t kReplyVersion = 2;  // version 1's fields, then reply_to: written for a reply only
constexpr uint8_t kDispatchVersion = 1;
// Version 1's fields, then the former recipients (docs/adr/0160): written only for a recall's record that
// names some, so every other record's bytes are as before.
constexpr uint8_t kDispatchFormerVersion = 2;

void put_message(ByteWriter& w, const Message& m) {
  const bool reply = m.reply_to.has_value();
  w.u8(reply ? kReplyVersion : kMessageVersion);
  w.u64(m.id.value);
  w.str(m.conversation.str());
  w.str(m.sender.str());
  w.str(m.sender_device.str());
  w.str(m.client_msg_id);
  w.i64(m.server_time_ms);
  w.str(m.body);
  if (reply) w.u64(m.reply_to->value);
}

Result<Message> get_message(ByteReader& r) {
  QIM_ASSIGN_OR_RETURN(uint8_t version, r.u8("version"));
  if (version != kMessageVersion && version != kReplyVersion)
    return r.corrupt("version", "unknown version " + std::to_string(version));
  Message m;
  QIM_ASSIGN_OR_RETURN(m.id.value, r.u64("id"));
  QIM_ASSIGN_OR_RETURN(m.conversation, r.name<ConversationId>("conversation"));
  QIM_ASSIGN_OR_RETURN(m.sender, r.name<UserId>("sender"));
  QIM_ASSIGN_OR_RETURN(m.sender_device, r.name<DeviceId>("sender_device", /*optional=*/true));
  QIM_ASSIGN_OR_RETURN(m.client_msg_id, r.str("client_msg_id", 64));
  QIM_ASSIGN_OR_RETURN(m.server_time_ms, r.i64("server_time_ms"));
  QIM_ASSIGN_OR_RETURN(m.body, r.str("body", kMaxBodyBytes));
  if (version == kReplyVersion) {
    QIM_ASSIGN_OR_RETURN(uint64_t reply_to, r.u64("reply_to"));
    m.reply_to = MessageId{reply_to};
  }
  return m;
}

}  // namespace

std::string encode_message(const Message& m) {
  ByteWriter w;
  put_message(w, m);
  return w.take();
}

Result<Message> decode_message(std::string_view bytes) {
  ByteReader r(bytes, "message");
  QIM_ASSIGN_OR_RETURN(Message m, get_message(r));
  QIM_RETURN_IF_ERROR(r.finish());
  return m;
}

std::string encode_dispatch_record(const DispatchRecord& rec) {
  ByteWriter w;
  const bool former = !rec.former_recipients.empty();
  w.u8(former ? kDispatchFormerVersion : kDispatchVersion);
  w.str(rec.identity.id.str());
  w.u64(rec.identity.digest);
  put_message(w, rec.message);
  w.u32(static_cast<uint32_t>(rec.chunks.size()));
  for (const auto& chunk : rec.chunks) {
    w.u32(static_cast<uint32_t>(chunk.size()));
    for (const auto& u : chunk) w.str(u.str());
  }
  if (former) {
    w.u32(static_cast<uint32_t>(rec.former_recipients.size()));
    for (const auto& u : rec.former_recipients) w.str(u.str());
  }
  return w.take();
}

Result<DispatchRecord> decode_dispatch_record(std::string_view bytes) {
  ByteReader r(bytes, "dispatch record");
  QIM_ASSIGN_OR_RETURN(uint8_t version, r.u8("version"));
  if (version != kDispatchVersion && version != kDispatchFormerVersion)
    return r.corrupt("version", "unknown version " + std::to_string(version));
  DispatchRecord rec;
  QIM_ASSIGN_OR_RETURN(rec.identity.id, r.name<DispatchId>("dispatch_id"));
  QIM_ASSIGN_OR_RETURN(rec.identity.digest, r.u64("digest"));
  QIM_ASSIGN_OR_RETURN(rec.message, get_message(r));
  QIM_ASSIGN_OR_RETURN(uint32_t chunks, r.u32("chunk_count"));
  // No chunk only for a record that names former recipients (version 2).
  if ((chunks == 0 && version == kDispatchVersion) || chunks > kMaxChunks)
    return r.corrupt("chunk_count", std::to_string(chunks) + " out of bounds");
  for (uint32_t c = 0; c < chunks; ++c) {
    QIM_ASSIGN_OR_RETURN(uint32_t n, r.u32("chunk_size"));
    if (n == 0 || n > kMaxChunkEntries) return r.corrupt("chunk_size", std::to_string(n) + " out of bounds");
    auto& chunk = rec.chunks.emplace_back();
    for (uint32_t i = 0; i < n; ++i) {
      QIM_ASSIGN_OR_RETURN(UserId u, r.name<UserId>("recipient"));
      chunk.push_back(std::move(u));
    }
    rec.identity.manifest.entry_counts.push_back(n);
  }
  if (version == kDispatchFormerVersion) {
    QIM_ASSIGN_OR_RETURN(uint32_t n, r.u32("former_count"));
    if (n == 0 || n > kMaxFormerRecipients)
      return r.corrupt("former_count", std::to_string(n) + " out of bounds");
    for (uint32_t i = 0; i < n; ++i) {
      QIM_ASSIGN_OR_RETURN(UserId u, r.name<UserId>("former_recipient"));
      rec.former_recipients.push_back(std::move(u));
    }
    if (!recall_of(rec.message))
      return r.corrupt("former_count", "former recipients on a record of no recall");
  }
  QIM_RETURN_IF_ERROR(r.finish());
  return rec;
}

}  // namespace qim
