#pragma once
// A MailboxStore decorator that lets a shard's writes through only while its owner still holds the lease
// it was added under (MailboxNode::add_shard). Each begin, entry write and finish first asks `valid`; once
// it says no, the call fails with EpochAhead ("lease lapsed") and writes nothing, so a worker stops within
// one store call of its lease's local deadline. Reads (watermarks, mailbox reads, progress, listings)
// always pass: they cannot break a newer owner's chain. Thread-safe if `valid` is.

#include <functional>
#include <string>

#include "mailbox/store.h"

namespace qim {

// True while the shard may be written. Called before every write of the shard, from its worker thread;
// must be cheap and thread-safe (e.g. a comparison of an atomic deadline with a monotonic clock).
using LeaseCheck = std::function<bool()>;

class LeaseGuardedStore final : public MailboxStore {
 public:
  LeaseGuardedStore(MailboxStore& inner, ShardId shard, LeaseCheck valid)
      : inner_(inner), shard_(shard), valid_(std::move(valid)) {}

  std::string_view backend_name() const override { return inner_.backend_name(); }
  uint32_t finish_page_limit() const override { return inner_.finish_page_limit(); }
  Result<BeginOutcome> begin_dispatch(ShardId shard, Epoch epoch, const DispatchIdentity& identity,
                                      Offset observed) override;
  Status write_chunks(ShardId shard, Epoch epoch, std::span<const ChunkWrite> chunks) override;
  Result<FinishOutcome> finish_dispatch(ShardId shard, Epoch epoch, const DispatchId& id,
                                        const LaneAdvances& advances) override;
  Result<PageOutcome> finish_dispatch_page(ShardId shard, Epoch epoch,
                                           std::span<const PageItem> page) override;
  Result<std::array<MailboxSeq, kLanes>> lane_watermarks(ShardId shard, Epoch epoch) override {
    return inner_.lane_watermarks(shard, epoch);
  }
  Result<MailboxPage> read_mailbox(const MailboxQuery& q) override { return inner_.read_mailbox(q); }
  Result<DispatchProgress> dispatch_progress(ShardId shard, Epoch epoch, const DispatchId& id) override {
    return inner_.dispatch_progress(shard, epoch, id);
  }
  Result<uint64_t> gc_completed_dispatches() override { return inner_.gc_completed_dispatches(); }
  Result<SweepOutcome> sweep_retention(const UserId& user) override { return inner_.sweep_retention(user); }
  Result<std::vector<UserId>> list_retention_users(ShardId shard, const std::string& after,
                                                   uint32_t limit) override {
    return inner_.list_retention_users(shard, after, limit);
  }
  OpCounts op_counts() const override { return inner_.op_counts(); }
  void abandon_dispatch(ShardId shard, Epoch epoch, const DispatchId& id) override {
    inner_.abandon_dispatch(shard, epoch, id);
  }
  uint64_t inflight_records() const override { return inner_.inflight_records(); }

 private:
  // OK while the lease holds (or for another shard); the EpochAhead of a lapsed lease otherwise.
  Status check(ShardId shard, Epoch epoch) const;

  MailboxStore& inner_;
  const ShardId shard_;
  const LeaseCheck valid_;
};

// True for the error LeaseGuardedStore returns once the lease lapsed.
bool is_lease_lapsed(const Error& error);

}  // namespace qim
