#pragma once
// What the mailbox side of a recall needs to know (issue 39 item 2, docs/adr/0129 and 0157): which entries
// of the mailbox log are recall entries, which message and which of its edits they recall, how a message's
// dispatch records are named, so that MailboxStore::redact_message can find the recalled SEND's entries and
// its edits' entries in a shard, and what an edit entry holds once its text is removed.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "core/sharding.h"
#include "mailbox/message.h"

namespace qim {

// The id of the dispatch record `part` of message `message` in `shard`: "m<message>-s<shard>" for part 0,
// "m<message>-s<shard>-p<part>" after it (a shard's recipients past one record's bound). Fanout names
// every dispatch record so (fanout/dispatch_plan.h), an event's entry included (its message id is the
// event's own, message_id_of(partition, event offset)).
DispatchId message_dispatch_id(MessageId message, ShardId shard, uint32_t part);

// What a recall entry recalls: the SEND's message id, and the message ids of the edits applied before the
// recall (the ids their ~edit entries were dispatched under). A recall written before decision 157 names
// no edits.
struct RecallEntry {
  MessageId target;
  std::vector<MessageId> edits;
  bool operator==(const RecallEntry&) const = default;
};

// Set only for an entry whose client_msg_id is "~recall" and whose body is
// {"event":"recall","message_id":"<decimal id>",...} as fanout writes it (lifecycle/message_state.h,
// event_entry_body); its "edits":["<decimal id>",...] if present. Clients cannot send a client_msg_id
// starting with '~'. nullopt for anything else, a malformed "edits" included.
std::optional<RecallEntry> recall_of(const Message& entry);

// The body of edit entry `body` (client_msg_id "~edit", {"event":"edit","message_id":"<target>",
// "body":<text>,"edited_at":..,"edit_count":..}) with its text removed: the same bytes with "body":"",
// which are the bytes fanout dispatches for that edit read again after the recall. nullopt when there is
// nothing to change: another entry, an edit of another message, a body not in that form, or text already
// empty.
std::optional<std::string> redacted_edit_body(MessageId target, std::string_view client_msg_id,
                                              std::string_view body);

}  // namespace qim
