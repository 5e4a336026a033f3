#include "outbox/outbox_record.h"

#include <xxhash.h>

#include "core/bytes.h"

namespace qim {

namespace {
constexpr uint8_t kVersion = 1;         // a message
constexpr uint8_t kGroupOpVersion = 2;  // a group op: version 1's fields, then the op
constexpr uint8_t kEventVersion = 3;    // a message event: version 1's fields, then kind and target
constexpr uint8_t kReplyVersion = 4;    // a reply: version 1's fields, then reply_to (docs/adr/0125)
constexpr uint8_t kReceiptVersion = 5;  // a read receipt: version 1's fields, then read_through
}  // namespace

std::string encode_outbox_record(const OutboxRecord& rec) {
  ByteWriter w;
  const bool reply = !rec.group_op && !rec.event && rec.reply_to.has_value();
  w.u8(rec.group_op       ? kGroupOpVersion
       : rec.event        ? kEventVersion
       : rec.read_through ? kReceiptVersion
       : reply            ? kReplyVersion
                          : kVersion);
  w.str(rec.conversation.str());
  w.str(rec.sender.str());
  w.str(rec.sender_device.str());
  w.str(rec.client_msg_id);
  w.i64(rec.server_time_ms);
  w.str(rec.body);
  if (rec.group_op) {
    const GroupOp& op = *rec.group_op;
    w.u8(static_cast<uint8_t>(op.kind));
    w.u32(static_cast<uint32_t>(op.members.size()));
    for (const auto& m : op.members) w.str(m.str());
    w.str(op.name);
    w.u8(static_cast<uint8_t>(op.role));
  } else if (rec.event) {
    w.u8(static_cast<uint8_t>(rec.event->kind));
    w.u64(rec.event->target.value);
  } else if (rec.read_through) {
    w.u64(rec.read_through->value);
  } else if (reply) {
    w.u64(rec.reply_to->value);
  }
  return w.take();
}

Result<OutboxRecord> decode_outbox_record(std::string_view bytes) {
  ByteReader r(bytes, "outbox record");
  QIM_ASSIGN_OR_RETURN(uint8_t version, r.u8("version"));
  if (version != kVersion && version != kGroupOpVersion && version != kEventVersion &&
      version != kReceiptVersion && version != kReplyVersion) {
    return r.corrupt("version", "unknown version " + std::to_string(version));
  }
  OutboxRecord rec;
  QIM_ASSIGN_OR_RETURN(rec.conversation, r.name<ConversationId>("conversation"));
  QIM_ASSIGN_OR_RETURN(rec.sender, r.name<UserId>("sender"));
  QIM_ASSIGN_OR_RETURN(rec.sender_device, r.name<DeviceId>("sender_device", true));
  QIM_ASSIGN_OR_RETURN(rec.client_msg_id, r.str("client_msg_id", 64));
  QIM_ASSIGN_OR_RETURN(rec.server_time_ms, r.i64("server_time_ms"));
  QIM_ASSIGN_OR_RETURN(rec.body, r.str("body", kMaxBodyBytes));
  if (version == kGroupOpVersion) {
    GroupOp op;
    QIM_ASSIGN_OR_RETURN(uint8_t kind, r.u8("group_op"));
    if (kind < static_cast<uint8_t>(GroupOpKind::kCreate) ||
        kind > static_cast<uint8_t>(GroupOpKind::kSetRole)) {
      return r.corrupt("group_op", "unknown op " + std::to_string(kind));
    }
    op.kind = static_cast<GroupOpKind>(kind);
    QIM_ASSIGN_OR_RETURN(uint32_t count, r.u32("group_members"));
    if (count > kMaxUsersPerGroupOp) {
      return r.corrupt("group_members",
                       std::to_string(count) + " users, over " + std::to_string(kMaxUsersPerGroupOp));
    }
    for (uint32_t i = 0; i < count; ++i) {
      QIM_ASSIGN_OR_RETURN(UserId u, r.name<UserId>("group_members"));
      op.members.push_back(std::move(u));
    }
    QIM_ASSIGN_OR_RETURN(op.name, r.str("group_name", kMaxGroupNameBytes));
    QIM_ASSIGN_OR_RETURN(uint8_t role, r.u8("group_role"));
    if (role > static_cast<uint8_t>(GroupRole::kOwner)) return r.corrupt("group_role", "unknown role");
    op.role = static_cast<GroupRole>(role);
    if (!rec.conversation.str().starts_with("g:")) {
      return r.corrupt("conversation", "a group op in '" + rec.conversation.str() + "', not a group");
    }
    rec.group_op = std::move(op);
  }
  if (version == kEventVersion) {
    MessageEvent event;
    QIM_ASSIGN_OR_RETURN(uint8_t kind, r.u8("event"));
    if (kind < static_cast<uint8_t>(MessageEventKind::kEdit) ||
        kind > static_cast<uint8_t>(MessageEventKind::kUnreact)) {
      return r.corrupt("event", "unknown event " + std::to_string(kind));
    }
    event.kind = static_cast<MessageEventKind>(kind);
    QIM_ASSIGN_OR_RETURN(event.target.value, r.u64("event_target"));
    rec.event = event;
  }
  if (version == kReceiptVersion) {
    QIM_ASSIGN_OR_RETURN(uint64_t through, r.u64("read_through"));
    rec.read_through = MessageId{through};
  }
  if (version == kReplyVersion) {
    QIM_ASSIGN_OR_RETURN(uint64_t reply_to, r.u64("reply_to"));
    rec.reply_to = MessageId{reply_to};
  }
  QIM_RETURN_IF_ERROR(r.finish());
  return rec;
}

std::string_view message_event_name(MessageEventKind kind) {
  switch (kind) {
    case MessageEventKind::kEdit:
      return "edit";
    case MessageEventKind::kRecall:
      return "recall";
    case MessageEventKind::kReact:
      return "react";
    case MessageEventKind::kUnreact:
      return "unreact";
  }
  return "unknown";
}

uint32_t outbox_partition_of(const ConversationId& conversation, uint32_t partitions) {
  return static_cast<uint32_t>(XXH3_64bits(conversation.str().data(), conversation.str().size()) %
                               partitions);
}

MessageId message_id_of(uint32_t partition, Offset offset) {
  return MessageId{(uint64_t{partition} << kOffsetBits) | offset.value};
}

Message to_message(const OutboxRecord& r, MessageId id) {
  return Message{id,     r.conversation, r.sender, r.sender_device, r.client_msg_id, r.server_time_ms,
                 r.body, r.reply_to};
}

}  // namespace qim
