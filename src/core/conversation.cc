#include "core/conversation.h"

#include <algorithm>

namespace qim {

namespace {

constexpr std::string_view kDirectKind = "d";
constexpr std::string_view kDirectShape = "'d:<user>:<user>'";
constexpr std::string_view kGroupKind = "g";

Error bad(std::string_view text, const std::string& why) {
  return Error(Errc::kInvalidArgument,
               "conversation id '" + shown_text(text, ConversationId::kMaxBytes) + "' " + why);
}

Result<Conversation> parse_direct(std::string_view text, std::string_view members) {
  const size_t count = 1 + static_cast<size_t>(std::count(members.begin(), members.end(), ':'));
  if (count != 2) {
    return bad(text, "names " + std::to_string(count) + (count == 1 ? " member" : " members") +
                         "; a direct conversation has 2 members, " + std::string(kDirectShape) +
                         " (user ids cannot hold ':')");
  }
  const size_t colon = members.find(':');
  const std::string_view low = members.substr(0, colon);
  const std::string_view high = members.substr(colon + 1);
  if (auto s = check_name(UserTag::kKind, low, UserId::kMaxBytes); !s.ok()) {
    return bad(text, "has a bad first member: " + s.error().message());
  }
  if (auto s = check_name(UserTag::kKind, high, UserId::kMaxBytes); !s.ok()) {
    return bad(text, "has a bad second member: " + s.error().message());
  }
  if (high < low) {
    return bad(text, "is not canonical: the members must be in byte order, 'd:" + std::string(high) + ":" +
                         std::string(low) + "'");
  }
  return Conversation::direct(UserId::unchecked(std::string(low)), UserId::unchecked(std::string(high)));
}

}  // namespace

std::optional<UserId> DirectPair::peer_of(const UserId& member) const {
  if (member == low) return high;
  if (member == high) return low;
  return std::nullopt;
}

Result<Conversation> Conversation::parse(std::string_view text) {
  if (text.empty()) {
    return Error(Errc::kInvalidArgument,
                 "conversation id is empty; expected '<kind>:...', e.g. " + std::string(kDirectShape));
  }
  if (text.size() > ConversationId::kMaxBytes) {
    return Error(Errc::kInvalidArgument, "conversation id is " + std::to_string(text.size()) +
                                             " bytes, over the limit of " +
                                             std::to_string(ConversationId::kMaxBytes));
  }
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return bad(text, "has no kind: expected '<kind>:...', e.g. " + std::string(kDirectShape));
  }
  const std::string_view kind = text.substr(0, colon);
  if (kind == kDirectKind) return parse_direct(text, text.substr(colon + 1));
  if (kind == kGroupKind) {
    const std::string_view group = text.substr(colon + 1);
    if (auto s = check_name(GroupTag::kKind, group, GroupId::kMaxBytes); !s.ok()) {
      return bad(text, "has a bad group: " + s.error().message() + " (expected 'g:<group id>')");
    }
    return Conversation::group(GroupId::unchecked(std::string(group)));
  }
  return bad(text, "has unknown kind '" + shown_text(kind, 16) + "'; the kinds are 'd' (direct, " +
                       std::string(kDirectShape) + ") and 'g' (group, 'g:<group id>')");
}

Result<Conversation> Conversation::of(const ConversationId& id) {
  return parse(id.str());
}

Result<Conversation> Conversation::direct(const UserId& a, const UserId& b) {
  QIM_RETURN_IF_ERROR(check_name(UserTag::kKind, a.str(), UserId::kMaxBytes));
  QIM_RETURN_IF_ERROR(check_name(UserTag::kKind, b.str(), UserId::kMaxBytes));
  const UserId& low = a < b ? a : b;
  const UserId& high = a < b ? b : a;
  return Conversation(
      ConversationId::unchecked(std::string(kDirectKind) + ":" + low.str() + ":" + high.str()),
      DirectPair{low, high});
}

Result<Conversation> Conversation::group(const GroupId& group) {
  QIM_RETURN_IF_ERROR(check_name(GroupTag::kKind, group.str(), GroupId::kMaxBytes));
  return Conversation(ConversationId::unchecked(std::string(kGroupKind) + ":" + group.str()), group);
}

Result<ConversationId> ConversationId::parse(std::string_view text) {
  QIM_ASSIGN_OR_RETURN(Conversation c, Conversation::parse(text));
  return c.id();
}

Result<ConversationId> direct_conversation(const UserId& a, const UserId& b) {
  QIM_ASSIGN_OR_RETURN(Conversation c, Conversation::direct(a, b));
  return c.id();
}

}  // namespace qim
