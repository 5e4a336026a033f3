#pragma once
// ContractStore: the MailboxStore contract implemented once over any StoreBackend. It validates input,
// keeps the per-shard in-flight table and frontier cache, checks chains and pages, and leaves storage to
// the backend. Backends therefore differ only in how they store, never in what the contract means.

#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "mailbox/entry_sink.h"
#include "mailbox/inflight_table.h"
#include "mailbox/store.h"
#include "mailbox/store_backend.h"

namespace qim {

// How often an owner re-reads the shard's highest frontier row to learn that a newer owner took the shard
// (fencing): before any begin, write or finish once `every_ms` (by BackendContext::clock) or
// `every_pages` frontier writes have passed since the last read, and after every failed entry or frontier
// write. A stale owner therefore starts no frontier write later than every_ms after the higher epoch's row
// landed, and makes at most every_pages of them meanwhile; then every call fails with EpochAhead.
struct FenceCheck {
  int64_t every_ms = 1000;     // QIM_MAILBOX_FENCE_CHECK_MS
  uint32_t every_pages = 256;  // QIM_MAILBOX_FENCE_CHECK_PAGES
};

class ContractStore final : public MailboxStore {
 public:
  // page_max: QIM_MAILBOX_FINISH_PAGE_MAX; it can only lower the backend's declared limit. `sink`, if set,
  // must outlive the store: write_chunks hands it every entry once the backend wrote them, and fails with
  // its error (the chunks stay unwritten, so the frontier cannot pass them and a retry writes both).
  ContractStore(std::unique_ptr<StoreBackend> backend, BackendContext context,
                std::optional<uint32_t> page_max, FenceCheck fence = {}, EntrySink* sink = nullptr);
  // Waits for the identity writes begins left in flight (store.h, ~MailboxStore). Call with no other
  // call of this store running.
  ~ContractStore() override;
  ContractStore(const ContractStore&) = delete;
  ContractStore& operator=(const ContractStore&) = delete;

  std::string_view backend_name() const override { return backend_->name(); }
  uint32_t finish_page_limit() const override { return page_limit_; }
  Result<BeginOutcome> begin_dispatch(ShardId shard, Epoch epoch, const DispatchIdentity& identity,
                                      Offset observed) override;
  Result<std::vector<Result<BeginOutcome>>> begin_dispatch_page(ShardId shard, Epoch epoch,
                                                                std::span<const BeginRequest> page) override;
  Status write_chunks(ShardId shard, Epoch epoch, std::span<const ChunkWrite> chunks) override;
  Result<FinishOutcome> finish_dispatch(ShardId shard, Epoch epoch, const DispatchId& dispatch_id,
                                        const LaneAdvances& advances) override;
  Result<PageOutcome> finish_dispatch_page(ShardId shard, Epoch epoch,
                                           std::span<const PageItem> page) override;
  Result<std::array<MailboxSeq, kLanes>> lane_watermarks(ShardId shard, Epoch epoch) override;
  Result<MailboxPage> read_mailbox(const MailboxQuery& query) override;
  Result<MailboxVisibility> visibility(const UserId& user) override;
  Result<std::vector<MailboxVisibility>> visibilities(std::span<const UserId> users) override;
  Result<DispatchProgress> dispatch_progress(ShardId shard, Epoch epoch,
                                             const DispatchId& dispatch_id) override;
  Result<uint64_t> gc_completed_dispatches() override { return backend_->gc_completed_dispatches(); }
  // As store.h says; contract_redact.cc. One identity read per epoch of the shard and part of the SEND
  // and of each edit, then one backend redaction of users x the SEND's entries and one of users x the
  // edits' entries.
  Status redact_message(ShardId shard, Epoch epoch, const RecallEntry& recall,
                        std::span<const UserId> users) override;
  // As store.h says, and the trim never passes an entry whose day bucket has not expired (seqs follow
  // the log, buckets the server time): it stops just below the lowest one, and an expired bucket whose
  // proof it does not cover stays in the ledger (buckets_expired counts only the buckets removed).
  // docs/adr/0058-retention-trim-below-live-buckets.md.
  Result<SweepOutcome> sweep_retention(const UserId& user) override;
  Result<std::vector<UserId>> list_retention_users(ShardId shard, const std::string& after,
                                                   uint32_t limit) override;
  OpCounts op_counts() const override { return backend_->counters().snapshot(); }
  void abandon_dispatch(ShardId shard, Epoch epoch, const DispatchId& dispatch_id) override;
  uint64_t inflight_records() const override;

 private:
  struct ShardState {
    mutable std::mutex mu;
    std::optional<MailboxSeq> frontier;  // the owner's cached frontier; reloaded after an uncertain write
    int64_t checked_ms = 0;              // when the stored frontier was last read (FenceCheck)
    uint32_t pages_since_check = 0;      // frontier writes since then
    InflightTable inflight;
  };

  // The lowest seq in (after, upto] of an entry of `user` whose day bucket has not expired at `now`, or
  // nullopt: what the retention trim must stay below. Reads the entries in between, 1000 at a time.
  Result<std::optional<MailboxSeq>> lowest_live_seq(const UserId& user, MailboxSeq after, MailboxSeq upto,
                                                    int64_t now);
  Result<ShardState*> shard_state(ShardId shard);
  // Loads the frontier into the cache if needed, re-reads it when a FenceCheck is due; EpochAhead if it
  // is of a higher epoch than `epoch` (and from then on, the cache keeping that frontier).
  Result<MailboxSeq> owner_frontier(ShardState& state, ShardId shard, Epoch epoch);
  // The EpochAhead of an owner at `epoch` that found `stored` of a higher epoch; names the bound.
  Error fenced(ShardId shard, Epoch epoch, MailboxSeq stored, std::string_view how) const;
  // After a failed write (`what`): re-reads the stored frontier; the fenced EpochAhead if it is of a higher
  // epoch (the cache then keeps it), else `failure`. Caller holds state.mu.
  Error after_failed_write(ShardState& state, ShardId shard, Epoch epoch, const Error& failure,
                           std::string_view what);
  // begin_dispatch's decision for one record once its identity claim answered (`existing`: what the
  // backend already held, nullopt if this observation was stored): the conflict check, the outcome and
  // the in-flight tracking. Caller holds state.mu.
  Result<BeginOutcome> settle_begin(ShardState& state, MailboxSeq frontier, Epoch epoch,
                                    const DispatchIdentity& identity, Offset observed,
                                    const std::optional<StoredIdentity>& existing);
  Result<PageOutcome> finish_locked(ShardState& state, ShardId shard, Epoch epoch,
                                    std::span<const PageItem> page);
  // The seqs of the entries message `message`'s dispatch records wrote in `shard` at each of `epochs`
  // (the first is this owner's: its in-flight table is asked first); contract_redact.cc.
  Result<std::vector<MailboxSeq>> dispatched_seqs(ShardState& state, ShardId shard,
                                                  std::span<const Epoch> epochs, MessageId message);

  std::unique_ptr<StoreBackend> backend_;
  BackendContext context_;
  uint32_t page_limit_;
  FenceCheck fence_;
  EntrySink* sink_;  // not owned; may be null
  mutable std::mutex shards_mu_;
  std::map<uint32_t, std::unique_ptr<ShardState>> shards_;
};

// Checks the 64 advances of a record: every lane once (InvalidArgument for an unknown or repeated lane),
// all with the same expected_previous and observed (Invariant otherwise).
Status check_uniform_advances(const LaneAdvances& advances);

}  // namespace qim
