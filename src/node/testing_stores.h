#pragma once
// Test doubles around a MailboxStore: a decorator that fails chosen calls, to check that workers retry and
// that a failed page leaves the frontier where it was.

#include <atomic>

#include "mailbox/store.h"

namespace qim::testing {

class FlakyStore final : public MailboxStore {
 public:
  explicit FlakyStore(MailboxStore& inner) : inner_(inner) {}

  std::atomic<int> fail_write_chunks{0};  // the next N write_chunks calls fail with Transport
  std::atomic<int> fail_finish_page{0};   // the next N finish_dispatch_page calls fail with Timeout
  std::atomic<int> page_calls{0};
  std::atomic<int> finish_calls{0};

  std::string_view backend_name() const override { return inner_.backend_name(); }
  uint32_t finish_page_limit() const override { return inner_.finish_page_limit(); }
  Result<BeginOutcome> begin_dispatch(ShardId shard, Epoch epoch, const DispatchIdentity& identity,
                                      Offset observed) override {
    return inner_.begin_dispatch(shard, epoch, identity, observed);
  }
  Status write_chunks(ShardId shard, Epoch epoch, std::span<const ChunkWrite> chunks) override {
    if (fail_write_chunks > 0 && fail_write_chunks-- > 0) return Error(Errc::kTransport, "injected");
    return inner_.write_chunks(shard, epoch, chunks);
  }
  Result<FinishOutcome> finish_dispatch(ShardId shard, Epoch epoch, const DispatchId& id,
                                        const LaneAdvances& advances) override {
    finish_calls++;
    return inner_.finish_dispatch(shard, epoch, id, advances);
  }
  Result<PageOutcome> finish_dispatch_page(ShardId shard, Epoch epoch,
                                           std::span<const PageItem> page) override {
    page_calls++;
    if (fail_finish_page > 0 && fail_finish_page-- > 0) return Error(Errc::kTimeout, "injected");
    return inner_.finish_dispatch_page(shard, epoch, page);
  }
  Result<std::array<MailboxSeq, kLanes>> lane_watermarks(ShardId shard, Epoch epoch) override {
    return inner_.lane_watermarks(shard, epoch);
  }
  Result<MailboxPage> read_mailbox(const MailboxQuery& q) override { return inner_.read_mailbox(q); }
  Result<DispatchProgress> dispatch_progress(ShardId shard, Epoch epoch, const DispatchId& id) override {
    return inner_.dispatch_progress(shard, epoch, id);
  }
  Result<uint64_t> gc_completed_dispatches() override { return inner_.gc_completed_dispatches(); }
  Result<SweepOutcome> sweep_retention(const UserId& user) override { return inner_.sweep_retention(user); }
  OpCounts op_counts() const override { return inner_.op_counts(); }
  void abandon_dispatch(ShardId shard, Epoch epoch, const DispatchId& id) override {
    inner_.abandon_dispatch(shard, epoch, id);
  }
  uint64_t inflight_records() const override { return inner_.inflight_records(); }

 private:
  MailboxStore& inner_;
};

}  // namespace qim::testing
