#pragma once
// A MailboxStore decorator that lets a shard's writes through only while its owner still holds the lease
// it was added under (MailboxNode::add_shard). Each begin, entry write, redaction and finish first asks
// `valid`; once it says no, the call fails with EpochAhead ("lease lapsed") and writes nothing, so a worker
// stops within one store call of its lease's local deadline. Reads (watermarks, mailbox reads, progress,
// listings) always pass: they cannot break a newer owner's chain. Thread-safe if `valid` is.

#include <functional>
#include <string>

#include "mailbox/forwarding_store.h"

namespace qim {

// True while the shard may be written. Called before every write of the shard, from its worker thread;
// must be cheap and thread-safe (e.g. a comparison of an atomic deadline with a monotonic clock).
using LeaseCheck = std::function<bool()>;

class LeaseGuardedStore final : public ForwardingStore {
 public:
  LeaseGuardedStore(MailboxStore& inner, ShardId shard, LeaseCheck valid)
      : ForwardingStore(inner), shard_(shard), valid_(std::move(valid)) {}

  Result<BeginOutcome> begin_dispatch(ShardId shard, Epoch epoch, const DispatchIdentity& identity,
                                      Offset observed) override;
  Result<std::vector<Result<BeginOutcome>>> begin_dispatch_page(ShardId shard, Epoch epoch,
                                                                std::span<const BeginRequest> page) override;
  Status write_chunks(ShardId shard, Epoch epoch, std::span<const ChunkWrite> chunks) override;
  Status redact_message(ShardId shard, Epoch epoch, const RecallEntry& recall,
                        std::span<const UserId> users) override;
  Result<FinishOutcome> finish_dispatch(ShardId shard, Epoch epoch, const DispatchId& id,
                                        const LaneAdvances& advances) override;
  Result<PageOutcome> finish_dispatch_page(ShardId shard, Epoch epoch,
                                           std::span<const PageItem> page) override;

 private:
  // OK while the lease holds (or for another shard); the EpochAhead of a lapsed lease otherwise.
  Status check(ShardId shard, Epoch epoch) const;

  const ShardId shard_;
  const LeaseCheck valid_;
};

// True for the error LeaseGuardedStore returns once the lease lapsed.
bool is_lease_lapsed(const Error& error);

}  // namespace qim
