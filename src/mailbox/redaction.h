#pragma once
// What the mailbox side of a recall needs to know (issue 39 item 2, docs/adr/0129): which entries of the
// mailbox log are recall entries and which message they recall, and how a message's dispatch records are
// named, so that MailboxStore::redact_message can find the recalled SEND's entries in a shard.

#include <cstdint>
#include <optional>

#include "core/ids.h"
#include "core/sharding.h"
#include "mailbox/message.h"

namespace qim {

// The id of the dispatch record `part` of message `message` in `shard`: "m<message>-s<shard>" for part 0,
// "m<message>-s<shard>-p<part>" after it (a shard's recipients past one record's bound). Fanout names
// every dispatch record so (fanout/dispatch_plan.h).
DispatchId message_dispatch_id(MessageId message, ShardId shard, uint32_t part);

// The message a recall entry recalls: set only for an entry whose client_msg_id is "~recall" and whose
// body starts {"event":"recall","message_id":"<decimal id>", as fanout writes it
// (lifecycle/message_state.h, event_entry_body). Clients cannot send a client_msg_id starting with '~'.
std::optional<MessageId> recall_target_of(const Message& entry);

}  // namespace qim
