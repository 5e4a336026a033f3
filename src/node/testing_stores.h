#pragma once
// Test doubles around a MailboxStore: a decorator that fails chosen calls, to check that workers retry and
// that a failed page leaves the frontier where it was, or (the uncertain case) that a write which landed
// but reported a failure is recovered with nothing lost.

#include <atomic>
#include <functional>

#include "mailbox/forwarding_store.h"

namespace qim::testing {

class FlakyStore final : public ForwardingStore {
 public:
  explicit FlakyStore(MailboxStore& inner) : ForwardingStore(inner) {}

  std::atomic<int> fail_write_chunks{0};  // the next N write_chunks calls fail with Transport
  std::atomic<int> fail_finish_page{0};   // the next N finish_dispatch_page calls fail with Timeout
  // The next N finish_dispatch_page / finish_dispatch calls are carried out (the frontier moves), then
  // report Timeout: a write that landed although its answer was lost.
  std::atomic<int> land_then_timeout_page{0};
  std::atomic<int> land_then_timeout_finish{0};
  std::atomic<int> fail_dispatch_progress{0};  // the next N dispatch_progress calls fail with Transport
  std::atomic<int> fail_redact{0};             // the next N redact_message calls fail with Transport
  std::atomic<int> redact_calls{0};
  // Called before each read_mailbox (set before the store is shared between threads), e.g. to hold a read.
  std::function<void(const MailboxQuery&)> before_read;
  std::atomic<int> page_calls{0};
  std::atomic<int> finish_calls{0};

  Status write_chunks(ShardId shard, Epoch epoch, std::span<const ChunkWrite> chunks) override {
    if (fail_write_chunks > 0 && fail_write_chunks-- > 0) return Error(Errc::kTransport, "injected");
    return inner().write_chunks(shard, epoch, chunks);
  }
  Result<FinishOutcome> finish_dispatch(ShardId shard, Epoch epoch, const DispatchId& id,
                                        const LaneAdvances& advances) override {
    finish_calls++;
    auto out = inner().finish_dispatch(shard, epoch, id, advances);
    if (out.ok() && land_then_timeout_finish > 0 && land_then_timeout_finish-- > 0)
      return Error(Errc::kTimeout, "injected after the write landed");
    return out;
  }
  Result<PageOutcome> finish_dispatch_page(ShardId shard, Epoch epoch,
                                           std::span<const PageItem> page) override {
    page_calls++;
    if (fail_finish_page > 0 && fail_finish_page-- > 0) return Error(Errc::kTimeout, "injected");
    auto out = inner().finish_dispatch_page(shard, epoch, page);
    if (out.ok() && land_then_timeout_page > 0 && land_then_timeout_page-- > 0)
      return Error(Errc::kTimeout, "injected after the write landed");
    return out;
  }
  Status redact_message(ShardId shard, Epoch epoch, const RecallEntry& recall,
                        std::span<const UserId> users) override {
    redact_calls++;
    if (fail_redact > 0 && fail_redact-- > 0) return Error(Errc::kTransport, "injected");
    return inner().redact_message(shard, epoch, recall, users);
  }
  Result<MailboxPage> read_mailbox(const MailboxQuery& q) override {
    if (before_read) before_read(q);
    return inner().read_mailbox(q);
  }
  Result<DispatchProgress> dispatch_progress(ShardId shard, Epoch epoch, const DispatchId& id) override {
    if (fail_dispatch_progress > 0 && fail_dispatch_progress-- > 0)
      return Error(Errc::kTransport, "injected");
    return inner().dispatch_progress(shard, epoch, id);
  }
};

}  // namespace qim::testing
