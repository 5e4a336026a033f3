#include "gateway/membership.h"

namespace qim {

bool is_member(const UserId& user, const ConversationId& conversation) {
  auto parsed = Conversation::of(conversation);
  if (!parsed.ok()) return false;
  switch (parsed->kind()) {
    case ConversationKind::kDirect:
      return parsed->direct_pair()->has(user);
    case ConversationKind::kGroup:
      return false;  // not in the id: the gateway asks the group store (src/groups/group_store.h)
  }
  return false;
}

}  // namespace qim
