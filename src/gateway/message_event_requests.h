#pragma once
// EDIT, RECALL, REACT and UNREACT as one implementation behind two doors, the WebSocket frames
// (connection.cc) and the server API (src/api/message_event_routes.cc; docs/protocol.md "Editing and
// recalling", docs/adr/0090, 0167): the same rules fanout decides by (lifecycle/message_state.h), checked
// before the append so that a refusal appends nothing; fanout decides again at the event's offset (a race
// with another event is settled there).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "archiver/history_store.h"
#include "core/status.h"
#include "gateway/protocol/client_frame.h"
#include "gateway/protocol/wire_code.h"
#include "gateway/send_dedup.h"
#include "gateway/send_request.h"
#include "groups/group_store.h"
#include "lifecycle/message_state.h"
#include "lifecycle/message_state_store.h"
#include "log/log.h"

namespace qim {

// What an event needs, whichever door; the pointers outlive the call. Null `messages` or `outbox`: the
// lifecycle is not served (UNAVAILABLE); null `groups`: a group's events are UNAVAILABLE.
struct MessageEventDeps {
  Log* outbox = nullptr;
  MessageStateStore* messages = nullptr;
  GroupStore* groups = nullptr;
  HistoryStore* history = nullptr;  // an old message's body for an EDIT (edit_body); null: none
  SendDedup* dedup = nullptr;       // SEND's idempotency table (client_msg_id); must not be null
  LifecyclePolicy policy;           // QIM_EDIT_WINDOW_MS, QIM_RECALL_WINDOW_MS: fanout's
  size_t max_body_bytes = 16 * 1024;
  int64_t apply_wait_ms = 5'000;          // QIM_GROUP_APPLY_WAIT_MS: how long fanout's decision is awaited
  std::function<void(WireCode)> refused;  // optional: told the code of each refusal (the gateway's metrics)
};

// The content the idempotency table keeps of an event (kind, target, body): the same client_msg_id with
// another target or body is refused, as a SEND's is.
uint64_t message_event_fingerprint(const MessageEventFrame& f);

// The answer frame (with `ref`) to an event of fingerprint `fingerprint` whose append `sent` completed (or
// was found in the table): its <KIND>_ACK; ERROR with the append's code; INVALID_ARGUMENT when the
// client_msg_id was used for another message or event.
std::string message_event_answer(const std::string& ref, const MessageEventFrame& f, uint64_t fingerprint,
                                 const Result<SentMessage>& sent);

// The checks made before the idempotency table is asked (no store read): UNAVAILABLE (no message state, or
// a group's event without a group store) or FORBIDDEN (a direct conversation `actor` is not a member of);
// nullopt when the event goes on. Nothing is appended.
std::optional<SendRefusal> message_event_precheck(const MessageEventDeps& deps, const UserId& actor,
                                                  const MessageEventFrame& f);

// The rest, after SendDedup::begin answered kFirst for `key` (SendDedup::key_of(actor, f.client_msg_id)):
// a group's membership (NOT_A_MEMBER, ...) and the actor's role, the decision before the append (the
// refusals' codes, wire_code_of), an EDIT's body (edit_body; TOO_LARGE with the attachments), the Outbox
// record, then fanout's decision awaited up to deps.apply_wait_ms (its refusal's code when another event
// won a race, UNAVAILABLE when not decided yet). Completes `key` in the table (a refusal frees it). The
// answer frame with `ref`. Blocks on the stores and the Outbox: run it on a pool. Thread-safe.
std::string append_message_event(const MessageEventDeps& deps, const std::string& ref, const UserId& actor,
                                 const DeviceId& device, const MessageEventFrame& f, int64_t now_ms,
                                 const std::string& key);

// The wire code of a refusal: UNKNOWN_MESSAGE (unknown, or of another conversation), WINDOW_PASSED,
// NOT_ALLOWED, MESSAGE_RECALLED.
WireCode wire_code_of(EventRefusal refusal);

// Fills page.life from `messages` for the page's messages that were edited, recalled or reacted to: the
// reactions as counts per reaction, `mine` when `reader` holds it (none without a reader: the server
// API's reads). A recalled message loses its body; an edited one gets its last edit's body read from
// `outbox` (the row's may lag: the archiver writes it after fanout decided the edit), the row's when the
// log no longer holds that edit or `outbox` is null. The store's and the log's errors.
Status annotate_history_page(MessageStateStore& messages, HistoryPage& page,
                             const std::optional<UserId>& reader = std::nullopt, Log* outbox = nullptr);

// The body an EDIT of `target` (of `conversation`) with the text `text` appends: an edit changes the text,
// never the files (docs/adr/0152, 0162): when the message has attachments, its attachments body with `text`
// as the caption, else `text`. The message's body is its SEND record's in `outbox`; when the log no longer
// holds that record (QIM_OUTBOX_RETENTION_MS), its row in `history` (the current body: the files are the
// same), so an old message does not lose its files either; `text` alone when neither holds it. The log's and
// the history store's errors.
Result<std::string> edit_body(Log& outbox, HistoryStore* history, const ConversationId& conversation,
                              MessageId target, uint32_t partition, std::string_view text);

}  // namespace qim
