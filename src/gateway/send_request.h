#pragma once
// SEND as one implementation behind two doors: the WebSocket frame (connection.cc) and the server API
// (src/api/). Here is what both do: where a SEND goes (resolve_send_target: the direct conversation of `to`,
// or a conversation the sender belongs to), the idempotent append to the Outbox through the SendDedup table
// (submit_send), and what an acknowledged message means for the key it was sent under (send_refusal: the
// same key with other content is refused). Group membership is checked by the caller
// (group_requests.h: check_group_member), because the connection orders that check with its other writes.

#include <functional>
#include <optional>
#include <string>

#include "core/clock.h"
#include "gateway/protocol/client_frame.h"
#include "gateway/protocol/wire_code.h"
#include "gateway/send_dedup.h"
#include "log/log.h"

namespace qim {

// Where a SEND of `sender` goes: `conversation`, and `group` when it is a group's (membership is then still
// to check). Refused (ok false) with INVALID_ARGUMENT (a bad `to`, a group client_msg_id starting with '~')
// or FORBIDDEN (a direct conversation the sender is not a member of).
struct SendTarget {
  bool ok = false;
  ConversationId conversation;
  std::optional<GroupId> group;
  WireCode code = WireCode::kInvalidArgument;
  std::string message;
};
SendTarget resolve_send_target(const UserId& sender, const SendFrame& frame);

// What the append needs: the Outbox, the idempotency table and the clock (all must outlive the append).
// `started`/`finished` (optional) bracket the Outbox append (the gateway counts SENDs in flight with them).
struct SendDoor {
  Log* outbox = nullptr;
  SendDedup* dedup = nullptr;
  const Clock* clock = nullptr;
  std::function<void()> started;
  std::function<void()> finished;
};
// The outcome of a SEND that was not answered at once: the message, or the append's error; `duplicate` when
// the key had been sent before (or was being sent by another request, whose outcome this is).
using SendDone = std::function<void(const Result<SentMessage>& sent, bool duplicate)>;

// Appends `body` as (sender, device, client_msg_id) to `conversation`, once per key within the dedup window.
// A key acknowledged before is answered at once: its message is returned and `done` is never called.
// Otherwise returns nullopt and `done` is called once, on another thread, when the append (this one or the
// first one of the same key) completes. The caller checked the target (resolve_send_target) and membership.
std::optional<SentMessage> submit_send(const SendDoor& door, const UserId& sender, const DeviceId& device,
                                       const std::string& client_msg_id, const ConversationId& conversation,
                                       std::string body, SendDone done);

// Whether an acknowledged `sent` answers a SEND of content `fingerprint` (send_fingerprint): nullopt when it
// does, else INVALID_ARGUMENT "client_msg_id '...' was already used for another message".
struct SendRefusal {
  WireCode code;
  std::string message;
};
std::optional<SendRefusal> send_refusal(const std::string& client_msg_id, uint64_t fingerprint,
                                        const SentMessage& sent);

}  // namespace qim
