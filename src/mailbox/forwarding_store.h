#pragma once
// A MailboxStore that passes every call to another one, unchanged: the base of decorators (the node's
// lease guard, the tests' fault injection and write counting), so each overrides only the calls it changes
// and a method added to the contract is forwarded in one place. Thread safety is the inner store's.

#include "mailbox/store.h"

namespace qim {

class ForwardingStore : public MailboxStore {
 public:
  // `inner` must outlive this object.
  explicit ForwardingStore(MailboxStore& inner) : inner_(inner) {}

  std::string_view backend_name() const override { return inner_.backend_name(); }
  uint32_t finish_page_limit() const override { return inner_.finish_page_limit(); }
  Result<BeginOutcome> begin_dispatch(ShardId shard, Epoch epoch, const DispatchIdentity& identity,
                                      Offset observed) override {
    return inner_.begin_dispatch(shard, epoch, identity, observed);
  }
  Result<std::vector<Result<BeginOutcome>>> begin_dispatch_page(ShardId shard, Epoch epoch,
                                                                std::span<const BeginRequest> page) override {
    return inner_.begin_dispatch_page(shard, epoch, page);
  }
  Status write_chunks(ShardId shard, Epoch epoch, std::span<const ChunkWrite> chunks) override {
    return inner_.write_chunks(shard, epoch, chunks);
  }
  Result<FinishOutcome> finish_dispatch(ShardId shard, Epoch epoch, const DispatchId& id,
                                        const LaneAdvances& advances) override {
    return inner_.finish_dispatch(shard, epoch, id, advances);
  }
  Result<PageOutcome> finish_dispatch_page(ShardId shard, Epoch epoch,
                                           std::span<const PageItem> page) override {
    return inner_.finish_dispatch_page(shard, epoch, page);
  }
  Result<std::array<MailboxSeq, kLanes>> lane_watermarks(ShardId shard, Epoch epoch) override {
    return inner_.lane_watermarks(shard, epoch);
  }
  Result<MailboxPage> read_mailbox(const MailboxQuery& q) override { return inner_.read_mailbox(q); }
  Result<MailboxVisibility> visibility(const UserId& user) override { return inner_.visibility(user); }
  Result<std::vector<MailboxVisibility>> visibilities(std::span<const UserId> users) override {
    return inner_.visibilities(users);
  }
  Result<DispatchProgress> dispatch_progress(ShardId shard, Epoch epoch, const DispatchId& id) override {
    return inner_.dispatch_progress(shard, epoch, id);
  }
  Result<uint64_t> gc_completed_dispatches() override { return inner_.gc_completed_dispatches(); }
  Status redact_message(ShardId shard, Epoch epoch, const RecallEntry& recall,
                        std::span<const UserId> users) override {
    return inner_.redact_message(shard, epoch, recall, users);
  }
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

 protected:
  MailboxStore& inner() { return inner_; }

 private:
  MailboxStore& inner_;
};

}  // namespace qim
