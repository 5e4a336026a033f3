#pragma once
// ContractStore: the MailboxStore contract implemented once over any StoreBackend. It validates input,
// keeps the per-shard in-flight table and frontier cache, checks chains and pages, and leaves storage to
// the backend. Backends therefore differ only in how they store, never in what the contract means.

#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "mailbox/inflight_table.h"
#include "mailbox/store.h"
#include "mailbox/store_backend.h"

namespace qim {

class ContractStore final : public MailboxStore {
 public:
  // page_max: QIM_MAILBOX_FINISH_PAGE_MAX; it can only lower the backend's declared limit.
  ContractStore(std::unique_ptr<StoreBackend> backend, BackendContext context,
                std::optional<uint32_t> page_max);

  std::string_view backend_name() const override { return backend_->name(); }
  uint32_t finish_page_limit() const override { return page_limit_; }
  Result<BeginOutcome> begin_dispatch(ShardId shard, Epoch epoch, const DispatchIdentity& identity,
                                      Offset observed) override;
  Status write_chunks(ShardId shard, Epoch epoch, std::span<const ChunkWrite> chunks) override;
  Result<FinishOutcome> finish_dispatch(ShardId shard, Epoch epoch, const DispatchId& dispatch_id,
                                        const LaneAdvances& advances) override;
  Result<PageOutcome> finish_dispatch_page(ShardId shard, Epoch epoch,
                                           std::span<const PageItem> page) override;
  Result<std::array<MailboxSeq, kLanes>> lane_watermarks(ShardId shard, Epoch epoch) override;
  Result<MailboxPage> read_mailbox(const MailboxQuery& query) override;
  Result<DispatchProgress> dispatch_progress(ShardId shard, Epoch epoch,
                                             const DispatchId& dispatch_id) override;
  Result<uint64_t> gc_completed_dispatches() override { return backend_->gc_completed_dispatches(); }
  Result<SweepOutcome> sweep_retention(const UserId& user) override;
  OpCounts op_counts() const override { return backend_->counters().snapshot(); }
  void abandon_dispatch(ShardId shard, Epoch epoch, const DispatchId& dispatch_id) override;
  uint64_t inflight_records() const override;

 private:
  struct ShardState {
    mutable std::mutex mu;
    std::optional<MailboxSeq> frontier;  // the owner's cached frontier; reloaded after an uncertain write
    InflightTable inflight;
  };

  Result<ShardState*> shard_state(ShardId shard);
  // Loads the frontier into the cache if needed; EpochAhead if it is of a higher epoch than `epoch`.
  Result<MailboxSeq> owner_frontier(ShardState& state, ShardId shard, Epoch epoch);
  Result<PageOutcome> finish_locked(ShardState& state, ShardId shard, Epoch epoch,
                                    std::span<const PageItem> page);

  std::unique_ptr<StoreBackend> backend_;
  BackendContext context_;
  uint32_t page_limit_;
  mutable std::mutex shards_mu_;
  std::map<uint32_t, std::unique_ptr<ShardState>> shards_;
};

// Checks the 64 advances of a record: every lane once (InvalidArgument for an unknown or repeated lane),
// all with the same expected_previous and observed (Invariant otherwise).
Status check_uniform_advances(const LaneAdvances& advances);

}  // namespace qim
