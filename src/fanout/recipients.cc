#include "fanout/recipients.h"

#include <algorithm>

namespace qim {

Result<UserId> direct_peer(const ConversationId& conversation, const UserId& member) {
  auto parsed = Conversation::of(conversation);
  if (!parsed.ok()) {
    return Error(Errc::kInvalidArgument,
                 "not a one-to-one conversation (\"d:<a>:<b>\"): " + parsed.error().message());
  }
  const DirectPair* pair = parsed->direct_pair();
  if (pair == nullptr) {
    return Error(Errc::kInvalidArgument, "conversation '" + conversation.str() +
                                             "' is not a one-to-one conversation (\"d:<a>:<b>\")");
  }
  auto peer = pair->peer_of(member);
  if (!peer) {
    return Error(Errc::kInvalidArgument,
                 "user " + member.str() + " is not a party of conversation '" + conversation.str() + "'");
  }
  return *std::move(peer);
}

Result<std::vector<UserId>> resolve_recipients(const OutboxRecord& record) {
  QIM_ASSIGN_OR_RETURN(UserId peer, direct_peer(record.conversation, record.sender));
  std::vector<UserId> out{peer};
  if (peer != record.sender) out.push_back(record.sender);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace qim
