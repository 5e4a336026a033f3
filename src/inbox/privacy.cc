#include "inbox/privacy.h"

#include <charconv>
#include <string>

namespace qim {

namespace {

constexpr std::string_view kBlock = "block";
constexpr std::string_view kBlockedBy = "blockedby";
constexpr std::string_view kMute = "mute";
constexpr std::string_view kHide = "hide";
constexpr std::string_view kForever = "forever";

// The owner of `user`'s cells of one scope: not a valid name ('~'), so never a real user's settings.
UserId scoped(std::string_view scope, const UserId& user) {
  return UserId::unchecked("~" + std::string(scope) + "~" + user.str());
}

std::optional<uint64_t> parse_u64(std::string_view text) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

Error corrupt(std::string_view what, const std::string& key, const std::string& value) {
  return Error(Errc::kCorruptEntry, std::string(what) + " cell '" + key + "' holds '" + value + "'");
}

}  // namespace

bool HiddenSet::hides(const ConversationId& c, MessageId message) const {
  if (auto it = through_.find(c); it != through_.end() && message <= it->second) return true;
  return messages_.contains({c, message});
}

std::optional<MessageId> HiddenSet::through(const ConversationId& c) const {
  if (auto it = through_.find(c); it != through_.end()) return it->second;
  return std::nullopt;
}

std::set<ConversationId> HiddenSet::conversations() const {
  std::set<ConversationId> out;
  for (const auto& [c, through] : through_) out.insert(c);
  for (const auto& [c, message] : messages_) out.insert(c);
  return out;
}

Status Privacy::block(const UserId& blocker, const UserId& target, int64_t version) {
  if (blocker.empty() || target.empty()) return Error(Errc::kInvalidArgument, "block without a user");
  if (blocker == target) return Error(Errc::kInvalidArgument, "a user cannot block themself");
  QIM_ASSIGN_OR_RETURN(auto listed, blocks(blocker));
  if (listed.size() >= kMaxBlocks && !std::binary_search(listed.begin(), listed.end(), target)) {
    return Error(Errc::kResourceExhausted,
                 blocker.str() + " blocks " + std::to_string(kMaxBlocks) + " users already (the bound)");
  }
  // The reverse cell (what the checks read) first: a failure between leaves the block enforced.
  QIM_RETURN_IF_ERROR(backend_.put_setting(scoped(kBlockedBy, target), blocker.str(), "1", version));
  return backend_.put_setting(scoped(kBlock, blocker), target.str(), "1", version);
}

Status Privacy::unblock(const UserId& blocker, const UserId& target, int64_t version) {
  if (blocker.empty() || target.empty()) return Error(Errc::kInvalidArgument, "unblock without a user");
  // The list first, the reverse cell second: a failure between leaves the block enforced.
  QIM_RETURN_IF_ERROR(backend_.put_setting(scoped(kBlock, blocker), target.str(), "0", version));
  return backend_.put_setting(scoped(kBlockedBy, target), blocker.str(), "0", version);
}

Result<std::vector<UserId>> Privacy::blocks(const UserId& blocker) {
  QIM_ASSIGN_OR_RETURN(auto cells, backend_.settings(scoped(kBlock, blocker)));
  std::vector<UserId> out;
  for (const auto& [user, value] : cells) {
    if (value == "1") out.push_back(UserId::unchecked(user));
  }
  return out;  // a std::map: sorted already
}

Result<std::set<UserId>> Privacy::blocked_by(const UserId& user) {
  QIM_ASSIGN_OR_RETURN(auto cells, backend_.settings(scoped(kBlockedBy, user)));
  std::set<UserId> out;
  for (const auto& [blocker, value] : cells) {
    if (value == "1") out.insert(UserId::unchecked(blocker));
  }
  return out;
}

Status Privacy::mute(const UserId& user, const ConversationId& c, std::optional<int64_t> until_ms,
                     int64_t version) {
  if (user.empty() || c.empty()) return Error(Errc::kInvalidArgument, "mute without a user or conversation");
  if (until_ms && *until_ms <= version)
    return Error(Errc::kInvalidArgument,
                 "mute 'until' " + std::to_string(*until_ms) + " is not in the future");
  return backend_.put_setting(scoped(kMute, user), c.str(), until_ms ? std::to_string(*until_ms) : "forever",
                              version);
}

Status Privacy::unmute(const UserId& user, const ConversationId& c, int64_t version) {
  if (user.empty() || c.empty())
    return Error(Errc::kInvalidArgument, "unmute without a user or conversation");
  return backend_.put_setting(scoped(kMute, user), c.str(), "", version);
}

Result<std::map<ConversationId, Mute>> Privacy::mutes(const UserId& user) {
  QIM_ASSIGN_OR_RETURN(auto cells, backend_.settings(scoped(kMute, user)));
  std::map<ConversationId, Mute> out;
  for (const auto& [c, value] : cells) {
    if (value.empty()) continue;
    if (value == kForever) {
      out[ConversationId::unchecked(c)] = Mute{};
      continue;
    }
    auto until = parse_u64(value);
    if (!until) return corrupt("mute", c, value);
    out[ConversationId::unchecked(c)] = Mute{static_cast<int64_t>(*until)};
  }
  return out;
}

Status Privacy::hide_message(const UserId& user, const ConversationId& c, MessageId message,
                             int64_t version) {
  if (user.empty() || c.empty())
    return Error(Errc::kInvalidArgument, "delete without a user or conversation");
  QIM_ASSIGN_OR_RETURN(auto cells, backend_.settings(scoped(kHide, user)));
  const std::string key = c.str() + "#" + std::to_string(message.value);
  if (cells.size() >= kMaxHiddenCells && !cells.contains(key)) {
    return Error(Errc::kResourceExhausted,
                 user.str() + " keeps " + std::to_string(kMaxHiddenCells) +
                     " deleted messages already (the bound; delete the conversation)");
  }
  return backend_.put_setting(scoped(kHide, user), key, "1", version);
}

Status Privacy::hide_conversation(const UserId& user, const ConversationId& c, MessageId through,
                                  int64_t version) {
  if (user.empty() || c.empty())
    return Error(Errc::kInvalidArgument, "delete without a user or conversation");
  return backend_.put_setting(scoped(kHide, user), c.str(), std::to_string(through.value), version);
}

Result<HiddenSet> Privacy::hidden(const UserId& user) {
  QIM_ASSIGN_OR_RETURN(auto cells, backend_.settings(scoped(kHide, user)));
  HiddenSet out;
  for (const auto& [key, value] : cells) {
    const size_t hash = key.rfind('#');
    if (hash == std::string::npos) {
      auto through = parse_u64(value);
      if (!through) return corrupt("delete", key, value);
      out.through_[ConversationId::unchecked(key)] = MessageId{*through};
      continue;
    }
    if (value != "1") continue;
    auto id = parse_u64(std::string_view(key).substr(hash + 1));
    if (!id) return corrupt("delete", key, value);
    out.messages_.insert({ConversationId::unchecked(key.substr(0, hash)), MessageId{*id}});
  }
  return out;
}

}  // namespace qim
