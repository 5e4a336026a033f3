#include "outbox/outbox_record.h"

#include <xxhash.h>

#include "core/bytes.h"

namespace qim {

namespace {
constexpr uint8_t kVersion = 1;
}  // namespace

std::string encode_outbox_record(const OutboxRecord& rec) {
  ByteWriter w;
  w.u8(kVersion);
  w.str(rec.conversation.str());
  w.str(rec.sender.str());
  w.str(rec.sender_device.str());
  w.str(rec.client_msg_id);
  w.i64(rec.server_time_ms);
  w.str(rec.body);
  return w.take();
}

Result<OutboxRecord> decode_outbox_record(std::string_view bytes) {
  ByteReader r(bytes, "outbox record");
  QIM_ASSIGN_OR_RETURN(uint8_t version, r.u8("version"));
  if (version != kVersion) return r.corrupt("version", "unknown version " + std::to_string(version));
  OutboxRecord rec;
  QIM_ASSIGN_OR_RETURN(rec.conversation, r.name<ConversationId>("conversation"));
  QIM_ASSIGN_OR_RETURN(rec.sender, r.name<UserId>("sender"));
  QIM_ASSIGN_OR_RETURN(rec.sender_device, r.name<DeviceId>("sender_device", true));
  QIM_ASSIGN_OR_RETURN(rec.client_msg_id, r.str("client_msg_id", 64));
  QIM_ASSIGN_OR_RETURN(rec.server_time_ms, r.i64("server_time_ms"));
  QIM_ASSIGN_OR_RETURN(rec.body, r.str("body", kMaxBodyBytes));
  QIM_RETURN_IF_ERROR(r.finish());
  return rec;
}

uint32_t outbox_partition_of(const ConversationId& conversation, uint32_t partitions) {
  return static_cast<uint32_t>(XXH3_64bits(conversation.str().data(), conversation.str().size()) %
                               partitions);
}

MessageId message_id_of(uint32_t partition, Offset offset) {
  return MessageId{(uint64_t{partition} << kOffsetBits) | offset.value};
}

Message to_message(const OutboxRecord& r, MessageId id) {
  return Message{id, r.conversation, r.sender, r.sender_device, r.client_msg_id, r.server_time_ms, r.body};
}

}  // namespace qim
