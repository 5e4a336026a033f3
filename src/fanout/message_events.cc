#include "fanout/message_events.h"

#include <chrono>

namespace qim {

Result<std::optional<MessageState>> read_event_target(Log& outbox, MessageId target, uint32_t partition,
                                                      uint64_t before) {
  const uint64_t target_partition = target.value >> kOffsetBits;
  const uint64_t target_offset = target.value & ((uint64_t{1} << kOffsetBits) - 1);
  if (target_partition != partition || target_offset >= before) return std::optional<MessageState>();
  QIM_ASSIGN_OR_RETURN(auto records,
                       outbox.read(partition, Offset{target_offset}, 1, std::chrono::milliseconds(0)));
  if (records.empty() || records.front().offset.value != target_offset) return std::optional<MessageState>();
  auto rec = decode_outbox_record(records.front().value);
  if (!rec.ok() || rec->group_op || rec->event) return std::optional<MessageState>();
  MessageState s;
  s.id = target;
  s.conversation = rec->conversation;
  s.sender = rec->sender;
  s.sender_device = rec->sender_device;
  s.client_msg_id = rec->client_msg_id;
  s.sent_at_ms = rec->server_time_ms;
  return std::optional<MessageState>(std::move(s));
}

Result<std::optional<MessageState>> MessageEvents::read_target(MessageId target, uint32_t partition,
                                                               uint64_t before) {
  return read_event_target(outbox_, target, partition, before);
}

Result<EventDecision> MessageEvents::decide(const OutboxRecord& record, uint32_t partition, uint64_t offset,
                                            bool moderates) {
  const MessageEvent& event = *record.event;
  EventRequest request{event, record.conversation, record.sender, record.server_time_ms, offset, moderates};
  // A target in another partition is another conversation's (or none): never read, never stored.
  const bool here = (event.target.value >> kOffsetBits) == partition;
  std::optional<MessageState> state;
  if (here) {
    QIM_ASSIGN_OR_RETURN(state, store_.load(event.target));
    if (state) {
      if (auto it = state->events.find(offset); it != state->events.end()) {
        return EventDecision{it->second, std::move(state)};  // decided before: a replay
      }
    } else {
      QIM_ASSIGN_OR_RETURN(state, read_target(event.target, partition, offset));
    }
  }
  EventOutcome outcome = decide_event(state ? &*state : nullptr, request, policy_);
  if (!state) {
    QIM_RETURN_IF_ERROR(settle(partition, offset));
    return EventDecision{outcome, std::nullopt};
  }
  state->events[offset] = outcome;
  QIM_RETURN_IF_ERROR(store_.put(*state, partition, offset));
  return EventDecision{outcome, std::move(state)};
}

Status MessageEvents::settle(uint32_t partition, uint64_t offset) {
  return store_.raise_watermark(partition, offset);
}

}  // namespace qim
