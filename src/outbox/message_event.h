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
  kEdit = 1,     // the record's body is the new body
  kRecall = 2,   // unsend for everyone; the record's body is empty
  kReact = 3,    // add a reaction; the record's body is the emoji (lifecycle/reaction.h)
  kUnreact = 4,  // remove one's own reaction; the record's body is the emoji
};

// Whether `kind` is a reaction (kReact, kUnreact): the archiver writes nothing for it, HISTORY folds it.
inline bool is_reaction(MessageEventKind kind) {
  return kind == MessageEventKind::kReact || kind == MessageEventKind::kUnreact;
}

struct MessageEvent {
  MessageEventKind kind = MessageEventKind::kEdit;
  MessageId target;
  bool operator==(const MessageEvent&) const = default;
};

// "edit", "recall", "react", "unreact".
std::string_view message_event_name(MessageEventKind kind);

}  // namespace qim
