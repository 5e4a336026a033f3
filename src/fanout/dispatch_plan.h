#pragma once
// From one Outbox record to the dispatch records fanout appends: one per shard holding a recipient, each
// with a deterministic id, so a replay of the same Outbox record yields byte-identical records (same
// digest and manifest) and the store recognises the repeated observation.

#include <vector>

#include "core/sharding.h"
#include "mailbox/dispatch.h"
#include "outbox/outbox_record.h"

namespace qim {

struct ShardDispatch {
  ShardId shard;
  DispatchRecord record;
};

// "m<message id>-s<shard>": fixed by the Outbox position and the shard.
DispatchId dispatch_id_for(MessageId message, ShardId shard);

// The dispatch records of an Outbox record read at (partition, offset), in shard order, recipients sorted
// and cut into chunks of at most `chunk_entries` (1..kMaxChunkEntries). InvalidArgument if the
// recipients cannot be resolved or the message is out of bounds.
Result<std::vector<ShardDispatch>> plan_dispatches(const OutboxRecord& record, uint32_t partition,
                                                   Offset offset, const ShardMap& shards,
                                                   uint32_t chunk_entries);
// The same with the recipients given (sorted, distinct): a group's members at `offset`, which fanout
// decides (groups/membership.h). Also InvalidArgument for no recipients.
Result<std::vector<ShardDispatch>> plan_dispatches_to(const OutboxRecord& record, uint32_t partition,
                                                      Offset offset, const ShardMap& shards,
                                                      uint32_t chunk_entries, std::vector<UserId> recipients);

}  // namespace qim
