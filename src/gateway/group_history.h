#pragma once
// HISTORY of a group for one member (docs/protocol.md "Groups"). The archive keeps every message the Outbox
// took for the group, also one whose sender had been removed by the time fanout read it (the gateway's
// check raced the removal; fanout delivered it to nobody). A member reads exactly what fanout delivered
// from when they (last) joined: messages at or after `joined` whose sender was a member at the
// message's offset (GroupMemberRecord::member_at, the rule fanout applies), so HISTORY never shows a
// message that no mailbox holds.

#include <cstdint>

#include "archiver/history_store.h"
#include "groups/group_store.h"

namespace qim {

// Reads `query` (a page of g:<group>, newest first) from `history`, dropping what fanout did not deliver,
// and reads further back until `query.limit` messages passed, the archive ends, or it reaches `joined`
// (an Outbox offset: a group's messages are all in one partition, so their ids order as their offsets).
// One GroupStore::member read per distinct sender. `more` is true when older messages the member may
// read may remain; `next_before` then says where to page on from when that is not the last message
// returned (the read stopped after filtering messages out, possibly with none to return). Errors: the
// history's and the group store's (Transport, Timeout, Io, CorruptEntry). Thread safety: the stores'.
Result<HistoryPage> read_group_history(HistoryStore& history, GroupStore& groups, const GroupId& group,
                                       HistoryQuery query, uint64_t joined);

}  // namespace qim
