#include "presence/inbox_presence_directory.h"

#include <algorithm>
#include <set>

#include "inbox/privacy.h"

namespace qim {

Result<std::vector<UserId>> InboxPresenceDirectory::direct_peers(const UserId& user, size_t limit) {
  QIM_ASSIGN_OR_RETURN(auto rows, inbox_.conversation_rows(user));
  // A backend may keep one row per epoch: the highest seq per conversation orders them.
  std::sort(rows.begin(), rows.end(),
            [](const ConversationRow& a, const ConversationRow& b) { return b.last.seq < a.last.seq; });
  std::vector<UserId> out;
  std::set<UserId> seen;
  for (const auto& row : rows) {
    if (out.size() == limit) break;
    auto c = Conversation::of(row.conversation);
    if (!c.ok() || c->direct_pair() == nullptr) continue;
    auto peer = c->direct_pair()->peer_of(user);
    if (!peer || *peer == user || !seen.insert(*peer).second) continue;
    out.push_back(*peer);
  }
  return out;
}

Result<PresencePrivacy> InboxPresenceDirectory::privacy(const UserId& user) {
  QIM_ASSIGN_OR_RETURN(auto settings, inbox_.settings(user));
  auto it = settings.find("presence");
  if (it == settings.end()) return PresencePrivacy::kEveryone;
  return parse_presence_privacy(it->second).value_or(PresencePrivacy::kNobody);
}

Result<std::set<UserId>> InboxPresenceDirectory::blocks(const UserId& user) {
  QIM_ASSIGN_OR_RETURN(auto list, Privacy(inbox_).blocks(user));
  return std::set<UserId>(list.begin(), list.end());
}

}  // namespace qim
