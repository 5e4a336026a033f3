#include "webhooks/webhook_event.h"

#include <fmt/format.h>

#include "core/conversation.h"
#include "gateway/protocol/json_writer.h"

namespace qim {

namespace {

// The envelope every event shares; `data` writes the kind's own fields inside "data".
template <typename Data>
WebhookEvent make_event(const OutboxRecord& r, uint32_t partition, Offset offset, size_t index,
                        std::string type, Data&& data) {
  const MessageId id = message_id_of(partition, offset);
  WebhookEvent e;
  e.id = fmt::format("evt_{}_{}", id.value, index);
  e.type = std::move(type);
  e.partition = partition;
  e.offset = offset;
  JsonWriter w;
  w.begin_object();
  w.field("version", int64_t{kWebhookPayloadVersion});
  w.field("id", e.id);
  w.field("type", e.type);
  w.field("time", r.server_time_ms);
  w.field("conversation", r.conversation.str());
  // Where the event sits in the Outbox: events of one conversation come in increasing (partition, offset)
  // order, which a receiver can check or sort by after a dead-letter replay.
  w.key("position").begin_object();
  w.field("partition", int64_t{partition});
  w.key("offset").uint64_as_string(offset.value);
  w.end_object();
  w.key("data").begin_object();
  data(w);
  w.end_object();
  w.end_object();
  e.body = w.take();
  return e;
}

const char* group_event_type(GroupOpKind kind) {
  switch (kind) {
    case GroupOpKind::kCreate:
      return "group.created";
    case GroupOpKind::kAdd:
      return "group.member_added";
    case GroupOpKind::kRemove:
      return "group.member_removed";
    case GroupOpKind::kLeave:
      return "group.member_left";
    case GroupOpKind::kRename:
      return "group.renamed";
    case GroupOpKind::kSetRole:
      return "group.role_changed";
  }
  return "group.changed";
}

}  // namespace

std::vector<WebhookEvent> webhook_events_of(const OutboxRecord& r, uint32_t partition, Offset offset,
                                            RecordFate fate) {
  std::vector<WebhookEvent> out;
  if (!fate.delivered) return out;
  const MessageId id = message_id_of(partition, offset);
  if (r.group_op) {
    const GroupOp& op = *r.group_op;
    auto group = Conversation::of(r.conversation);
    const std::string group_id = group.ok() && group->group_id() != nullptr ? group->group_id()->str() : "";
    out.push_back(make_event(r, partition, offset, 0, group_event_type(op.kind), [&](JsonWriter& w) {
      w.field("group", group_id);
      w.field("actor", r.sender.str());
      w.field("actor_device", r.sender_device.str());
      w.key("message_id").uint64_as_string(id.value);  // the system entry members see
      if (!op.members.empty()) {
        w.key("members").begin_array();
        for (const UserId& u : op.members) w.string(u.str());
        w.end_array();
      }
      if (op.kind == GroupOpKind::kCreate || op.kind == GroupOpKind::kRename) w.field("name", op.name);
      if (op.kind == GroupOpKind::kSetRole) w.field("role", group_role_name(op.role));
    }));
    return out;
  }
  if (r.read_through) {
    // A read receipt (docs/adr/0147): the reader read the conversation through `read_through`, a message
    // id (as the RECEIPT frame's), in Outbox order with the conversation's messages.
    out.push_back(make_event(r, partition, offset, 0, "message.read", [&](JsonWriter& w) {
      w.field("reader", r.sender.str());
      w.field("reader_device", r.sender_device.str());
      w.key("read_through").uint64_as_string(r.read_through->value);
    }));
    return out;
  }
  // A reaction is no event of payload version 1 (docs/adr/0148): it is not a recall.
  if (r.event && is_reaction(r.event->kind)) return out;
  if (r.event) {
    // An EDIT or RECALL fanout applied (a refused one makes no event): the record's own id, the message
    // it changes, who changed it; an edit's new body (a recall carries none).
    const bool edit = r.event->kind == MessageEventKind::kEdit;
    out.push_back(
        make_event(r, partition, offset, 0, edit ? "message.edited" : "message.recalled", [&](JsonWriter& w) {
          w.key("message_id").uint64_as_string(r.event->target.value);
          w.key("event_id").uint64_as_string(id.value);
          w.field("actor", r.sender.str());
          w.field("actor_device", r.sender_device.str());
          if (edit) w.field("body", r.body);
        }));
    return out;
  }
  out.push_back(make_event(r, partition, offset, 0, "message.created", [&](JsonWriter& w) {
    w.key("message_id").uint64_as_string(id.value);
    w.field("sender", r.sender.str());
    w.field("sender_device", r.sender_device.str());
    w.field("client_msg_id", r.client_msg_id);
    w.field("body", r.body);
  }));
  return out;
}

}  // namespace qim
