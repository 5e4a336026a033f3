#pragma once
// Test doubles around a MailboxStore: a decorator that fails chosen calls, to check that workers retry and
// that a failed page leaves the frontier where it was, or (the uncertain case) that a write which landed
// but reported a failure is recovered with nothing lost.

#include <atomic>
#include <functional>

#include "mailbox/store.h"

namespace qim::testing {

class FlakyStore final : public MailboxStore {
 public:
  explicit FlakyStore(MailboxStore& inner) : inner_(inner) {}

  std::atomic<int> fail_write_chunks{0};  // the next N write_chunks calls fail with Transport
  std::atomic<int> fail_finish_page{0};   // the next N finish_dispatch_page calls fail with Timeout
  // The next N finish_dispatch_page / finish_dispatch calls are carried out (the frontier moves), then
  // report Timeout: a write that landed although its answer was lost.
  std::atomic<int> land_then_timeout_page{0};
  std::atomic<int> land_then_timeout_finish{0};
  std::atomic<int> fail_dispatch_progress{0};  // the next N dispatch_progress calls fail with Transport
  // Called before each read_mailbox (set before the store is shared between threads), e.g. to hold a read.
  std::function<void(const MailboxQuery&)> before_read;
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
    auto out = inner_.finish_dispatch(shard, epoch, id, advances);
    if (out.ok() && land_then_timeout_finish > 0 && land_then_timeout_finish-- > 0)
      return Error(Errc::kTimeout, "injected after the write landed");
    return out;
  }
  Result<PageOutcome> finish_dispatch_page(ShardId shard, Epoch epoch,
                                           std::span<const PageItem> page) override {
    page_calls++;
    if (fail_finish_page > 0 && fail_finish_page-- > 0) return Error(Errc::kTimeout, "injected");
    auto out = inner_.finish_dispatch_page(shard, epoch, page);
    if (out.ok() && land_then_timeout_page > 0 && land_then_timeout_page-- > 0)
      return Error(Errc::kTimeout, "injected after the write landed");
    return out;
  }
  Result<std::array<MailboxSeq, kLanes>> lane_watermarks(ShardId shard, Epoch epoch) override {
    return inner_.lane_watermarks(shard, epoch);
  }
  Result<MailboxPage> read_mailbox(const MailboxQuery& q) override {
    if (before_read) before_read(q);
    return inner_.read_mailbox(q);
  }
  Result<DispatchProgress> dispatch_progress(ShardId shard, Epoch epoch, const DispatchId& id) override {
    if (fail_dispatch_progress > 0 && fail_dispatch_progress-- > 0)
      return Error(Errc::kTransport, "injected");
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
  MailboxStore& inner_;
};

}  // namespace qim::testing
