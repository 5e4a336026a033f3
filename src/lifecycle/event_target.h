#pragma once
// The message an EDIT or RECALL names, read from the Outbox: its id is (partition << 48 | offset) of its
// own SEND record, so the record at that position says who sent it, when, and in which conversation. Fanout
// reads it the first time an event names a message (fanout/message_events.h); the gateway, to refuse early.

#include <cstdint>
#include <optional>

#include "lifecycle/message_state.h"
#include "log/log.h"

namespace qim {

// The state of the message `target` with no events, read from `outbox`: nullopt unless the record at
// target's position is a chat message (not a group op, not an event) of `partition` at an offset below
// `before`, still kept by the log. The log's errors (Transport, Timeout, Io).
Result<std::optional<MessageState>> read_event_target(Log& outbox, MessageId target, uint32_t partition,
                                                      uint64_t before);

// The body of the chat message `target` as its SEND record holds it (an EDIT keeps its attachments, which
// live in the body: docs/adr/0113); nullopt where read_event_target finds no message. The log's errors.
Result<std::optional<std::string>> read_event_target_body(Log& outbox, MessageId target, uint32_t partition);

// The body the EDIT of `target` at `edit_offset` (MessageState::last_edit_offset) set: the message's current
// body, the one the archiver writes to its history row once it reaches that edit. nullopt when the log no
// longer holds the record (retention) or the record there is not an edit of `target`. The log's errors.
Result<std::optional<std::string>> read_edit_body(Log& outbox, MessageId target, uint64_t edit_offset);

}  // namespace qim
