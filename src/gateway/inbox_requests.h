#pragma once
// The gateway's side of the inbox (docs/protocol.md "Inbox", docs/adr/0076-0077): READ, CONVERSATIONS,
// RECEIPTS and SETTINGS answered by calling Inbox (inbox/inbox.h), which holds every rule (clamping,
// unread, who counts as a reader); here is only what is the door's: who may ask (membership from the group
// store or the direct pair), the labels of a page (a peer, a group's name), and the signals a READ sends.
// The functions block on store reads: connections run them on their lane of the gateway's FairPool, like
// SYNC and HISTORY.
//
// Signals after a READ that moved the mark (never for one that did not: a repeated READ is silent):
//  - READ_STATE to the reader's other live connections (every gateway, through the SignalBus);
//  - RECEIPT to the conversation's other members, when the reader's "receipts" setting is on: the peer of
//    a direct conversation, the current members of a group of at most kReceiptPushMaxMembers (a larger
//    group's receipts are asked for with RECEIPTS; pushing each read to thousands would cost more than
//    the message did).
//  - a read receipt record (outbox/outbox_record.h, docs/adr/0147) appended to the Outbox partition of the
//    conversation, under the same condition as RECEIPT (the mark moved to a message, receipts on) but for
//    any group size: the event webhook's `message.read`, in Outbox order with the conversation's messages.
//    Its append failing is logged and does not fail the READ (the mark is the truth; the hook's receipts
//    are at most once on that path).

#include <cstdint>
#include <string>

#include "core/clock.h"
#include "delivery/signal_bus.h"
#include "gateway/gateway_metrics.h"
#include "gateway/protocol/inbox_frames.h"
#include "groups/group_store.h"
#include "inbox/inbox.h"
#include "log/log.h"
#include "presence/presence_hub.h"
#include "users/user_registry.h"

namespace qim {

// Groups up to this many members get RECEIPT pushed (docs/adr/0077).
inline constexpr uint32_t kReceiptPushMaxMembers = 100;

class BlockedByCache;

struct InboxRequestDeps {
  Inbox* inbox = nullptr;                // required
  GroupStore* groups = nullptr;          // group names and membership; null: group RECEIPTS are UNAVAILABLE
  SignalBus* signals = nullptr;          // null: READ sends no signal
  const Clock* clock = nullptr;          // required: the version of a SETTINGS write
  GatewayMetrics* metrics = nullptr;     // optional: refusals counted by code
  PresenceHub* presence = nullptr;       // optional: told when a SETTINGS changed the presence privacy
  const UserRegistry* users = nullptr;   // optional (QIM_USER_REGISTRY=1): direct rows carry `peer_name`
  Log* outbox = nullptr;                 // optional: where a READ appends its read receipt (none when null)
  BlockedByCache* blocked_by = nullptr;  // optional: this gateway's, dropped at once by a BLOCK of its user
};

// Who asks: the authenticated user and the connection the frame came on (left out of READ_STATE).
struct InboxCaller {
  UserId user;
  uint64_t connection = 0;
  DeviceId device;  // the read receipt's reader_device (may be empty)
};

// The whole answer to one inbox frame: its reply frame (READ_OK, CONVERSATIONS_PAGE, RECEIPTS_PAGE,
// SETTINGS_OK) or an ERROR with a documented code: FORBIDDEN (RECEIPTS of a conversation the caller is not
// a member of, or of a group that does not exist: nothing is told about it), UNAVAILABLE (a store that
// does not answer, no group store), NOT_FOUND / INVALID_ARGUMENT / RATE_LIMITED as the Inbox returns them
// (wire_code_of), INTERNAL (logged, not shown).
// The ERROR frame of a refusal, counted in deps.metrics (optional); the inbox's and the privacy frames'.
std::string refuse_inbox_request(const InboxRequestDeps& deps, const std::string& ref, WireCode code,
                                 std::string_view message);

std::string answer_inbox_frame(const InboxRequestDeps& deps, const std::string& ref,
                               const InboxCaller& caller, const InboxFrame& frame);

}  // namespace qim
