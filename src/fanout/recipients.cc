#include "fanout/recipients.h"

#include <algorithm>

namespace qim {

namespace {
constexpr std::string_view kDirectPrefix = "d:";
}

Result<UserId> direct_peer(const ConversationId& conversation, const UserId& member) {
  const std::string& c = conversation.str();
  if (!c.starts_with(kDirectPrefix)) {
    return Error(Errc::kInvalidArgument,
                 "conversation '" + c + "' is not a one-to-one conversation (\"d:<a>:<b>\")");
  }
  // User ids may themselves hold ':', so try both places the member can take and keep what round-trips.
  const std::string_view body = std::string_view(c).substr(kDirectPrefix.size());
  const std::string& m = member.str();
  std::vector<std::string_view> candidates;
  if (body.size() > m.size() && body.starts_with(m) && body[m.size()] == ':') {
    candidates.push_back(body.substr(m.size() + 1));
  }
  if (body.size() > m.size() && body.ends_with(m) && body[body.size() - m.size() - 1] == ':') {
    candidates.push_back(body.substr(0, body.size() - m.size() - 1));
  }
  std::vector<UserId> peers;
  for (std::string_view text : candidates) {
    auto peer = UserId::parse(text);
    if (!peer.ok()) continue;
    auto again = direct_conversation(member, *peer);
    if (!again.ok() || *again != conversation) continue;
    if (std::find(peers.begin(), peers.end(), *peer) == peers.end()) peers.push_back(*std::move(peer));
  }
  if (peers.empty()) {
    return Error(Errc::kInvalidArgument, "user " + m + " is not a party of conversation '" + c + "'");
  }
  if (peers.size() > 1) {
    return Error(Errc::kInvalidArgument, "conversation '" + c + "' is ambiguous for user " + m);
  }
  return peers.front();
}

Result<std::vector<UserId>> resolve_recipients(const OutboxRecord& record) {
  QIM_ASSIGN_OR_RETURN(UserId peer, direct_peer(record.conversation, record.sender));
  std::vector<UserId> out{peer};
  if (peer != record.sender) out.push_back(record.sender);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace qim
