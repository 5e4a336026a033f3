#pragma once
// The gateway's side of typing and presence (docs/protocol.md "Typing and presence", docs/adr/0080-0083):
// what one connection keeps for them, and the bounds. The frames are handled by Connection members in
// ephemeral_requests.cc; nothing here is stored.
//
// TYPING: members only (a direct conversation's pair; a group's current members per the group store, read
// on the blocking pool as SEND's check), rate-limited per connection and conversation, sent on the
// SignalBus to the OTHER members' live connections on every gateway (not to the sender's own devices: a
// client shows nobody their own typing), in groups only up to kTypingMaxGroupMembers members.

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/ids.h"
#include "gateway/protocol/wire_code.h"
#include "gateway/token_bucket.h"
#include "groups/group_store.h"
#include "presence/presence_hub.h"

namespace qim {

// Per connection and conversation: bursts of kTypingBurst, then kTypingPerSecond (a client repeats
// "start" every few seconds while its user types, and sends "stop"); over it: RATE_LIMITED.
inline constexpr double kTypingPerSecond = 1.0;
inline constexpr double kTypingBurst = 3.0;
// Conversations a connection may type in with buckets kept at once (an idle one is forgotten after
// kTypingIdle); over it: RATE_LIMITED.
inline constexpr size_t kMaxTypingConversations = 32;
inline constexpr auto kTypingIdle = std::chrono::seconds(10);
// Groups larger than this get no typing (TOO_LARGE): a signal to every member of a large group per
// keystroke burst costs more than it tells.
inline constexpr uint32_t kTypingMaxGroupMembers = 100;

struct EphemeralState {
  struct Typing {
    TokenBucket bucket;
    std::chrono::steady_clock::time_point last;
  };
  std::map<ConversationId, Typing> typing;
  std::shared_ptr<PresenceWatch> watch;  // from AUTH to the close
  bool counted = false;                  // PresenceHub::connected was called, disconnected not yet
};

// Takes a typing token of `conversation` at `now`; false when over the rate or the conversation bound.
bool take_typing_token(EphemeralState& state, const ConversationId& conversation,
                       std::chrono::steady_clock::time_point now);

// The members of `group` but `me` to send a typing signal to, or the refusal: UNKNOWN_GROUP or
// NOT_A_MEMBER (as SEND), TOO_LARGE over kTypingMaxGroupMembers members, or a store error's code.
struct TypingTargets {
  std::vector<UserId> users;
  std::optional<WireCode> refusal;
  std::string message;
};
TypingTargets group_typing_targets(GroupStore& store, const GroupId& group, const UserId& me,
                                   uint32_t max_members = kTypingMaxGroupMembers);

}  // namespace qim
