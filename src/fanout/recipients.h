#pragma once
// Who gets a message: the mailboxes an Outbox record is materialised into.

#include <vector>

#include "core/ids.h"
#include "core/status.h"
#include "outbox/outbox_record.h"

namespace qim {

// For a one-to-one conversation "d:<a>:<b>" (core/conversation.h): the other party and the sender's own
// mailbox (for the sender's other devices), once each, sorted. InvalidArgument for an id that does not
// parse or is of another kind, or when the sender is not a party of the conversation.
Result<std::vector<UserId>> resolve_recipients(const OutboxRecord& record);

// The other party of a one-to-one conversation as seen by `member`. InvalidArgument if `conversation` is
// not a direct conversation that `member` is part of.
Result<UserId> direct_peer(const ConversationId& conversation, const UserId& member);

}  // namespace qim
