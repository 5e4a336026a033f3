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

// Recipients one dispatch record holds at most. A shard with more (a large group whose members hash to
// few shards: the hash is public, so an owner can choose such names) gets several records. With the
// longest names (64 bytes) and the largest body (64 KiB) a record of this many stays under 640 KB, inside
// both logs' record bound (1 MiB embedded, 1,000,000 bytes on Kafka). A count, not a byte budget, so the
// cut depends on the recipients alone and a replay cuts the same way whatever a log's bound (docs/adr/0053).
inline constexpr size_t kMaxRecipientsPerDispatch = 8192;

// "m<message id>-s<shard>" for a shard's first record (its only one unless it has more than a record
// holds), "m<message id>-s<shard>-p<part>" for its part-th (1, 2, ...): fixed by the Outbox position, the
// shard and the sorted recipients.
DispatchId dispatch_id_for(MessageId message, ShardId shard, uint32_t part = 0);

// The dispatch records of an Outbox record read at (partition, offset), in shard order, recipients sorted,
// cut into records of at most min(kMaxRecipientsPerDispatch, chunk_entries * kMaxChunks) in order, and
// each record into chunks of at most `chunk_entries` (1..kMaxChunkEntries). InvalidArgument if the
// recipients cannot be resolved or the message is out of bounds.
Result<std::vector<ShardDispatch>> plan_dispatches(const OutboxRecord& record, uint32_t partition,
                                                   Offset offset, const ShardMap& shards,
                                                   uint32_t chunk_entries);
// The same with the recipients given (sorted, distinct): a group's members at `offset`, which fanout
// decides (groups/membership.h). Also InvalidArgument for no recipients.
Result<std::vector<ShardDispatch>> plan_dispatches_to(const OutboxRecord& record, uint32_t partition,
                                                      Offset offset, const ShardMap& shards,
                                                      uint32_t chunk_entries, std::vector<UserId> recipients);

// Adds a recall's former recipients (docs/adr/0160: members who received the recalled SEND or an edit it
// names and are not members at the recall's offset; sorted, distinct, none of them a recipient) to
// `plan`, the recall's records: per shard, the first kMaxFormerRecipients in name order go on the shard's
// first record (part 0), or, when the recall has no recipient in that shard, on a record of their own
// without chunks under the same name ("m<recall>-s<shard>"), kept in shard order. Each changed record's
// identity is made again (its digest covers them). Deterministic in its inputs, so a replay plans the same
// bytes. Returns how many were left out over the bound (their entries keep the text). `plan` must not be
// empty (its first record gives the recall's message).
size_t add_former_recipients(std::vector<ShardDispatch>& plan, const ShardMap& shards,
                             std::vector<UserId> former);

}  // namespace qim
