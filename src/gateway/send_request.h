#pragma once
// SEND as one implementation behind two doors: the WebSocket frame (connection.cc) and the server API
// (src/api/). Here is what both do: where a SEND goes (resolve_send_target: the direct conversation of `to`,
// or a conversation the sender belongs to), the idempotent append to the Outbox through the SendDedup table
// (submit_send), and what an acknowledged message means for the key it was sent under (send_refusal: the
// same key with other content is refused), and the block rule of a direct SEND (blocked_send). Group
// membership is checked by the caller (group_requests.h: check_group_member), because the connection orders
// that check with its other writes.

#include <functional>
#include <optional>
#include <set>
#include <string>

#include "core/clock.h"
#include "gateway/before_send_hook.h"
#include "gateway/protocol/client_frame.h"
#include "gateway/protocol/wire_code.h"
#include "gateway/send_dedup.h"
#include "log/log.h"
#include "users/user_registry.h"

namespace qim {

// Where a SEND of `sender` goes: `conversation`, and `group` when it is a group's (membership is then still
// to check). Refused (ok false) with INVALID_ARGUMENT (a bad `to`, a group client_msg_id starting with '~')
// or FORBIDDEN (a direct conversation the sender is not a member of), or UNKNOWN_USER (with `users`, the
// registry on: a direct conversation's peer it does not hold).
struct SendTarget {
  bool ok = false;
  ConversationId conversation;
  std::optional<GroupId> group;
  WireCode code = WireCode::kInvalidArgument;
  std::string message;
};
SendTarget resolve_send_target(const UserId& sender, const SendFrame& frame,
                               const UserRegistry* users = nullptr);

// A SEND refused before anything is appended: its code and message.
struct SendRefusal {
  WireCode code;
  std::string message;
};

// What the append needs: the Outbox, the idempotency table and the clock (all must outlive the append).
// `started`/`finished` (optional) bracket the before-send hook and the Outbox append (the gateway counts
// SENDs in flight with them). `hook` (optional; null: no hook, no cost) is asked before the append
// (before_send_hook.h): its rejection or failure is the SEND's error, its replacement the body appended.
struct SendDoor {
  Log* outbox = nullptr;
  SendDedup* dedup = nullptr;
  const Clock* clock = nullptr;
  std::function<void()> started;
  std::function<void()> finished;
  BeforeSendHook* hook = nullptr;
};
// The outcome of a SEND that was not answered at once: the message, or the append's error; `duplicate` when
// the key had been sent before (or was being sent by another request, whose outcome this is).
using SendDone = std::function<void(const Result<SentMessage>& sent, bool duplicate)>;

// Whether `reply_to` names a chat message of `conversation` (docs/adr/0125): read from the Outbox at the
// id's position (lifecycle/event_target.h, as EDIT's target), facts that never change once appended, so the
// answer is the same however often it is asked. nullopt when it does; else UNKNOWN_MESSAGE (no message at
// that id, not a chat message, or one of another conversation: not revealed), or the read's error's code
// (UNAVAILABLE, ...). Blocks on the Outbox: run it on a pool, never on a connection's strand.
std::optional<SendRefusal> check_reply_target(Log& outbox, const ConversationId& conversation,
                                              MessageId reply_to);

// Appends `body` as (sender, device, client_msg_id) to `conversation`, once per key within the dedup window.
// A key acknowledged before is answered at once: its message is returned and `done` is never called.
// Otherwise returns nullopt and `done` is called once, when the append (this one or the first one of the same
// key) completes, or with the before-send hook's refusal (kBeforeSendRejected: REJECTED; Timeout / Transport
// under the closed policy: UNAVAILABLE; ResourceExhausted: RATE_LIMITED, possibly before this returns).
// Nothing is appended then and the key is free again. The fingerprint is the SEND's own body's, whatever the
// hook made of it (a retry of the same content is the same message), with `reply_to` (none: no reply). The
// caller checked the target (resolve_send_target), membership and reply_to (check_reply_target).
std::optional<SentMessage> submit_send(const SendDoor& door, const UserId& sender, const DeviceId& device,
                                       const std::string& client_msg_id, const ConversationId& conversation,
                                       std::string body, std::optional<MessageId> reply_to, SendDone done);

// Whether an acknowledged `sent` answers a SEND of content `fingerprint` (send_fingerprint): nullopt when it
// does, else INVALID_ARGUMENT "client_msg_id '...' was already used for another message".
// The wire code of a SEND's error: REJECTED for the hook's rejection, else wire_code_of.
inline WireCode send_error_code(const Error& e) {
  return e.code() == kBeforeSendRejected ? WireCode::kRejected : wire_code_of(e.code());
}

std::optional<SendRefusal> send_refusal(const std::string& client_msg_id, uint64_t fingerprint,
                                        const SentMessage& sent);

// The block rule of a direct SEND (docs/protocol.md "Blocking"), once for both doors: BLOCKED when the
// sender's peer in direct `conversation` is among `blockers` (the users who block the sender, as
// Privacy::blocked_by reads them); nullopt for a group, the sender's own conversation, or a peer who does
// not block the sender. Nothing is then appended.
std::optional<SendRefusal> blocked_send(const UserId& sender, const ConversationId& conversation,
                                        const std::set<UserId>& blockers);

}  // namespace qim
