#pragma once
// What the hook receives for an Outbox record (docs/webhooks.md "Events", payload version 1): a message
// becomes `message.created`; a group membership change becomes `group.created`, `group.member_added`,
// `group.member_removed`, `group.member_left`, `group.renamed` or `group.role_changed` once fanout
// applied it (a refused change, or a group message of a non-member that fanout did not deliver, becomes no
// event); an EDIT or RECALL becomes `message.edited` or `message.recalled` once fanout applied it (a
// REACT or UNREACT is no event: docs/adr/0148); a read receipt becomes `message.read` (docs/adr/0147; in a
// group only while the reader is a member at its offset). A new Outbox record kind is one more case in
// webhook_events_of().
//
// The event id is derived from the record's Outbox position (its message id), so a resend after a
// retry, a restart or a dead-letter replay carries the same `webhook-id` and the hook can deduplicate.

#include <cstdint>
#include <string>
#include <vector>

#include "core/mailbox_seq.h"
#include "outbox/outbox_record.h"

namespace qim {

inline constexpr int kWebhookPayloadVersion = 1;

struct WebhookEvent {
  std::string id;    // webhook-id: "evt_<message id>_<n>", n the event's index within its record
  std::string type;  // e.g. "message.created"
  std::string body;  // the JSON payload
  uint32_t partition = 0;
  Offset offset;
};

// What fanout made of the record, for the kinds whose event depends on it.
struct RecordFate {
  bool delivered = true;  // false: a refused group op or EDIT/RECALL, a group message fanout did not deliver
};

// The events of the record at (partition, offset), in the order they are to be sent (none for a record
// that is no event).
std::vector<WebhookEvent> webhook_events_of(const OutboxRecord& record, uint32_t partition, Offset offset,
                                            RecordFate fate);

}  // namespace qim
