#pragma once
// What the gateway appends to the Outbox for one SEND, for one group membership change (group_op set:
// then `body` is the op's system entry, groups/membership.h group_op_body, and client_msg_id is
// "~group:<op>"), or for one change to a sent message (event set, outbox/message_event.h: an EDIT, whose
// body is the new body, or a RECALL, with an empty body), or for one read receipt (read_through set: the
// sender read the conversation through that message; an empty body and client_msg_id; docs/adr/0147): the
// message before it has an id. Its id is
// (outbox partition << 48) | offset, fixed by the append, so fanout and the archiver derive the same id
// from the same record however often they replay it.

#include <cstdint>
#include <optional>
#include <string>

#include "core/ids.h"
#include "core/status.h"
#include "groups/group_op.h"
#include "mailbox/message.h"
#include "outbox/message_event.h"

namespace qim {

struct OutboxRecord {
  ConversationId conversation;
  UserId sender;
  DeviceId sender_device;
  std::string client_msg_id;
  int64_t server_time_ms = 0;
  std::string body;
  std::optional<GroupOp> group_op;    // a membership change of the group `conversation`
  std::optional<MessageEvent> event;  // a change to an earlier message of `conversation` (not with group_op)
  std::optional<MessageId> reply_to;  // a message's: the message of `conversation` it replies to
  // A read receipt (neither group_op nor event): no mailbox entry, no history, no push; the event
  // webhook's `message.read`. Every other Outbox consumer skips it. Set by name only.
  std::optional<MessageId> read_through;

  bool operator==(const OutboxRecord&) const = default;
};

// Version 1 for a message (the bytes of every record before groups), version 2 for a group op (version 1's
// fields, then the op), version 3 for a message event (version 1's fields, then the event's kind and target),
// version 4 for a reply (version 1's fields, then reply_to; a plain message stays version 1 byte for byte),
// version 5 for a read receipt (version 1's fields, then read_through). A record with more than one of group
// op, event and receipt is encoded as the first of them alone (the gateway never builds one); reply_to is
// encoded only on a message (none of the three).
std::string encode_outbox_record(const OutboxRecord& r);
// Every version. CorruptEntry naming the bad field (a binary before version 5 reads a receipt so: it skips
// it as a record that does not decode).
Result<OutboxRecord> decode_outbox_record(std::string_view bytes);

// Whether `r` is a read receipt (and nothing else).
inline bool is_read_receipt(const OutboxRecord& r) {
  return r.read_through.has_value() && !r.group_op && !r.event;
}

// The Outbox partition of a conversation: XXH3-64(conversation) mod partitions.
uint32_t outbox_partition_of(const ConversationId& conversation, uint32_t partitions);
// The server message id of the record at (partition, offset).
MessageId message_id_of(uint32_t partition, Offset offset);
// The message that entries carry.
Message to_message(const OutboxRecord& r, MessageId id);

}  // namespace qim
