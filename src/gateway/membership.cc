#include "gateway/membership.h"

namespace qim {

namespace {

bool composes_back(const UserId& user, std::string_view other, const ConversationId& conversation) {
  auto other_id = UserId::parse(other);
  if (!other_id.ok()) return false;
  auto expected = direct_conversation(user, *other_id);
  return expected.ok() && *expected == conversation;
}

}  // namespace

bool is_member(const UserId& user, const ConversationId& conversation) {
  std::string_view c = conversation.str();
  if (c.substr(0, 2) != "d:") return false;
  std::string_view pair = c.substr(2);
  const std::string& u = user.str();
  if (pair.size() > u.size() && pair.substr(0, u.size()) == u && pair[u.size()] == ':' &&
      composes_back(user, pair.substr(u.size() + 1), conversation)) {
    return true;
  }
  return pair.size() > u.size() && pair.substr(pair.size() - u.size()) == u &&
         pair[pair.size() - u.size() - 1] == ':' &&
         composes_back(user, pair.substr(0, pair.size() - u.size() - 1), conversation);
}

}  // namespace qim
