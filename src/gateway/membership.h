#pragma once
// Who may read or write a conversation. Only direct conversations exist today: "d:<a>:<b>" has exactly
// the members a and b. Membership is decided on the parsed conversation (core/conversation.h), never on
// how a user id fits the text of the id.

#include "core/ids.h"

namespace qim {

// True iff `user` is a member of direct `conversation`. False for a group (its members are in the group
// store, not in the id: src/groups/group_store.h) and for an id that does not parse (an empty one, or
// one made by ConversationId::unchecked): such a conversation has no members.
bool is_member(const UserId& user, const ConversationId& conversation);

}  // namespace qim
