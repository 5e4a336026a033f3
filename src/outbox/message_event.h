#pragma once
// A change to a message that is already sent (issue 39): an Outbox record of the message's conversation
// (outbox record version 3), decided by fanout at its own offset (lifecycle/message_state.h). The target is
// the message id (partition << 48 | offset) of the SEND it changes, which is in the same Outbox partition
// as the event, so fanout reads the target's sender, time and conversation from the Outbox itself.

#include <cstdint>
#include <string_view>

#include "core/ids.h"

namespace qim {

enum class MessageEventKind : uint8_t {
  kEdit = 1,    // the record's body is the new body
  kRecall = 2,  // unsend for everyone; the record's body is empty
};

struct MessageEvent {
  MessageEventKind kind = MessageEventKind::kEdit;
  MessageId target;
  bool operator==(const MessageEvent&) const = default;
};

// "edit", "recall".
std::string_view message_event_name(MessageEventKind kind);

}  // namespace qim
