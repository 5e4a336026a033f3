#include "lifecycle/event_target.h"

#include <chrono>

#include "core/mailbox_seq.h"
#include "outbox/outbox_record.h"

namespace qim {

namespace {

// The record at (partition, offset), decoded, if the log still holds one there. Past the end (an id never
// given) or below the start (removed by retention): nullopt, not an error; so is a record that does not
// decode (a newer binary's).
Result<std::optional<OutboxRecord>> read_record_at(Log& outbox, uint32_t partition, uint64_t offset) {
  QIM_ASSIGN_OR_RETURN(Offset end, outbox.end_offset(partition));
  QIM_ASSIGN_OR_RETURN(Offset start, outbox.start_offset(partition));
  if (offset >= end.value || offset < start.value) return std::optional<OutboxRecord>();
  QIM_ASSIGN_OR_RETURN(auto records, outbox.read(partition, Offset{offset}, 1, std::chrono::milliseconds(0)));
  if (records.empty() || records.front().offset.value != offset) return std::optional<OutboxRecord>();
  auto rec = decode_outbox_record(records.front().value);
  if (!rec.ok()) return std::optional<OutboxRecord>();
  return std::optional<OutboxRecord>(std::move(rec).value());
}

// The chat message's SEND record at target's position, if the log still holds one there.
Result<std::optional<OutboxRecord>> read_target_record(Log& outbox, MessageId target, uint32_t partition,
                                                       uint64_t before) {
  const uint64_t target_partition = target.value >> kOffsetBits;
  const uint64_t target_offset = target.value & ((uint64_t{1} << kOffsetBits) - 1);
  if (target_partition != partition || target_offset >= before) return std::optional<OutboxRecord>();
  QIM_ASSIGN_OR_RETURN(auto rec, read_record_at(outbox, partition, target_offset));
  if (!rec || rec->group_op || rec->event || rec->read_through) return std::optional<OutboxRecord>();
  return rec;
}

}  // namespace

Result<std::optional<std::string>> read_event_target_body(Log& outbox, MessageId target, uint32_t partition) {
  QIM_ASSIGN_OR_RETURN(auto rec, read_target_record(outbox, target, partition, UINT64_MAX));
  if (!rec) return std::optional<std::string>();
  return std::optional<std::string>(std::move(rec->body));
}

Result<std::optional<std::string>> read_edit_body(Log& outbox, MessageId target, uint64_t edit_offset) {
  const auto partition = static_cast<uint32_t>(target.value >> kOffsetBits);
  QIM_ASSIGN_OR_RETURN(auto rec, read_record_at(outbox, partition, edit_offset));
  if (!rec || !rec->event || rec->event->kind != MessageEventKind::kEdit || rec->event->target != target)
    return std::optional<std::string>();
  return std::optional<std::string>(std::move(rec->body));
}

Result<std::optional<MessageState>> read_event_target(Log& outbox, MessageId target, uint32_t partition,
                                                      uint64_t before) {
  QIM_ASSIGN_OR_RETURN(auto rec, read_target_record(outbox, target, partition, before));
  if (!rec) return std::optional<MessageState>();
  MessageState s;
  s.id = target;
  s.conversation = rec->conversation;
  s.sender = rec->sender;
  s.sender_device = rec->sender_device;
  s.client_msg_id = rec->client_msg_id;
  s.sent_at_ms = rec->server_time_ms;
  return std::optional<MessageState>(std::move(s));
}

}  // namespace qim
