#pragma once
// The attachment frames' gateway side (docs/protocol.md "Attachments"): who may ATTACH to a conversation
// (SEND's rules: a direct conversation's member not blocked by the peer, a group's member) and who may have
// a download URL of a message's attachment (HISTORY's rules: a current member who may see that message).
// The rules about objects are attachments/attachment_service.h's. Both doors call these: the WebSocket
// frames (connection_attachments.cc) and the server API (api/attachment_routes.cc, docs/adr/0165), so the
// rules and codes are the same whichever door. `service` null (no object store configured): every one of
// them answers ATTACHMENTS_DISABLED. These block on the stores: run them on a pool, never on a connection's
// strand.

#include <string>

#include "archiver/history_store.h"
#include "attachments/attachment_service.h"
#include "gateway/protocol/client_frame.h"
#include "groups/group_store.h"
#include "inbox/inbox_backend.h"
#include "lifecycle/message_state_store.h"

namespace qim {

// The refusal of everything about attachments when no object store is configured.
attachments::Refusal attachments_disabled();

// ATTACH_OK, or the ERROR: ATTACHMENTS_DISABLED (`service` null), FORBIDDEN (not a member of the direct
// conversation), BLOCKED (the peer blocks the caller), UNKNOWN_GROUP / NOT_A_MEMBER (a group), UNAVAILABLE (a
// group without a group store, a read that failed), or AttachmentService::grant_upload's refusals.
std::string answer_attach(attachments::AttachmentService* service, GroupStore* groups, InboxBackend* privacy,
                          const std::string& ref, const UserId& user, const AttachFrame& f);

// ATTACHMENT_URL_OK, or the ERROR ATTACHMENTS_DISABLED (`service` null), UNKNOWN_ATTACHMENT for everything
// the caller may not know of: a conversation they are not a member of now, a message that is not there, not
// visible to them (a group member who joined after it or was not a member at it), recalled, or without that
// attachment. UNAVAILABLE when a store read fails or there is no history store.
std::string answer_attachment_url(attachments::AttachmentService* service, HistoryStore* history,
                                  GroupStore* groups, MessageStateStore* messages, const std::string& ref,
                                  const UserId& reader, const AttachmentUrlFrame& f);

// The SEND's checked body: `caption` with the attachments (AttachmentService::check_references), or the
// refusal. TOO_LARGE when the body would be over `max_body_bytes`; ATTACHMENTS_DISABLED when `service` is
// null. A SEND without attachments is its body as it is (nothing is read).
attachments::Decided<std::string> checked_send_body(attachments::AttachmentService* service,
                                                    const UserId& sender, const ConversationId& conversation,
                                                    const SendFrame& f, size_t max_body_bytes);

}  // namespace qim
