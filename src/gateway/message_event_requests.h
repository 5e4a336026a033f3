#pragma once
// EDIT, RECALL, REACT and UNREACT at the gateway (docs/protocol.md "Editing and recalling", docs/adr/0090):
// the same rules fanout decides by (lifecycle/message_state.h), checked before the append so that a refusal
// appends nothing; fanout decides again at the event's offset (a race with another event is settled there).

#include <optional>
#include <string>

#include "archiver/history_store.h"
#include "core/status.h"
#include "gateway/protocol/wire_code.h"
#include "lifecycle/message_state_store.h"
#include "log/log.h"

namespace qim {

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
