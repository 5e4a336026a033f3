#pragma once
// Who may read or write a conversation. Only direct conversations exist today: "d:<a>:<b>" has exactly
// the members a and b. Anything else has no members the gateway knows of, so nobody may touch it.

#include "core/ids.h"

namespace qim {

// True iff `user` is a member of `conversation`. User ids may contain ':', so the other member is found
// by stripping `user` from either end and checking that the pair composes back to the same id.
bool is_member(const UserId& user, const ConversationId& conversation);

}  // namespace qim
