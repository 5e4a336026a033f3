#pragma once
// Identifiers of QIM. Strong types so a user id cannot be passed where a conversation id is expected:
// names (users, devices, dispatches) in core/name.h, conversations in core/conversation.h.

#include <compare>
#include <cstdint>

#include "core/conversation.h"
#include "core/name.h"

namespace qim {

// Server message id: (outbox partition << 48) | outbox offset. Deterministic for a given Outbox record,
// so fanout replays and the archiver agree on it without coordination.
struct MessageId {
  uint64_t value = 0;
  auto operator<=>(const MessageId&) const = default;
};

}  // namespace qim
