#pragma once
// Where fanout decides an EDIT or RECALL (outbox record version 3) at the Outbox offset it read it from,
// by the rules of lifecycle/message_state.h, exactly as it applies a group op: the outcome is written to
// the message state store before any dispatch record of the event is appended, and an event read again (a
// replay) returns its recorded outcome instead of being decided anew.
//
// The target is (partition << 48 | offset) of its SEND's own Outbox record, in the same partition (one
// conversation is one partition) and before the event: its sender, time and conversation come from the
// Outbox itself the first time an event names it (one log read, for events only: a plain SEND costs
// nothing here), then from the state.

#include <cstdint>
#include <optional>

#include "lifecycle/event_target.h"
#include "lifecycle/message_state_store.h"
#include "log/log.h"
#include "outbox/outbox_record.h"

namespace qim {

struct EventDecision {
  EventOutcome outcome;
  std::optional<MessageState> state;  // the target's state after the decision; none for an unknown target
};

// Thread-safe as far as its store and log are; fanout calls it from the thread of the event's partition.
class MessageEvents {
 public:
  MessageEvents(Log& outbox, MessageStateStore& store, LifecyclePolicy policy)
      : outbox_(outbox), store_(store), policy_(policy) {}

  // The decision for the event `record` (record.event set) read at (partition, offset). `moderates`: its
  // sender is an owner or admin of the record's group at `offset`. A new decision about a known message is
  // durable in the store before this returns; for an unknown one only the watermark moves. The store's or
  // log's errors (Io, Transport, Timeout, CorruptEntry): nothing was decided, retry.
  Result<EventDecision> decide(const OutboxRecord& record, uint32_t partition, uint64_t offset,
                               bool moderates);
  // For an event record fanout does not decide (its sender is not a member of the group at `offset`, or
  // it cannot be dispatched): moves the watermark past it, so the archiver knows it was settled.
  Status settle(uint32_t partition, uint64_t offset);

  const LifecyclePolicy& policy() const { return policy_; }

 private:
  // What the Outbox holds at the target: nullopt if it is no chat message of this partition before
  // `before` (an unknown id, a group op, an event, a record retention removed).
  Result<std::optional<MessageState>> read_target(MessageId target, uint32_t partition, uint64_t before);

  Log& outbox_;
  MessageStateStore& store_;
  LifecyclePolicy policy_;
};

}  // namespace qim
