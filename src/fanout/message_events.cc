#include "fanout/message_events.h"

#include <chrono>

namespace qim {

Result<std::optional<MessageState>> MessageEvents::read_target(MessageId target, uint32_t partition,
                                                               uint64_t before) {
  return read_event_target(outbox_, target, partition, before);
}

Result<EventDecision> MessageEvents::decide(const OutboxRecord& record, uint32_t partition, uint64_t offset,
                                            bool moderates) {
  const MessageEvent& event = *record.event;
  EventRequest request{event,
                       record.conversation,
                       record.sender,
                       record.server_time_ms,
                       offset,
                       moderates,
                       is_reaction(event.kind) ? record.body : std::string()};
  // A target in another partition is another conversation's (or none): never read, never stored.
  const bool here = (event.target.value >> kOffsetBits) == partition;
  std::optional<MessageState> state;
  if (here) {
    QIM_ASSIGN_OR_RETURN(state, store_.load(event.target));
    if (state) {
      if (auto it = state->events.find(offset); it != state->events.end()) {
        // Decided before: a replay. The watermark is raised again: a store that writes the state and the
        // watermark one after the other (CQL, docs/adr/0128) may have stopped between them, and the
        // archiver waits for the watermark to pass the event.
        QIM_RETURN_IF_ERROR(settle(partition, offset));
        return EventDecision{it->second, std::move(state)};
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
