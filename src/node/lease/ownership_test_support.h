#pragma once
// What the ownership tests share: a store decorator counting the writes that reach the store (a fenced
// node must add none), users of a chosen shard, and the exactly-once check of a mailbox read back.

#include <gtest/gtest.h>

#include <atomic>
#include <set>

#include "node/node_test_support.h"
#include "node/testing_stores.h"

namespace qim::testing {

// Counts begin, entry and finish calls that reached the inner store (the lease guard sits above it).
class WriteCountingStore final : public ForwardingStore {
 public:
  explicit WriteCountingStore(MailboxStore& inner) : ForwardingStore(inner) {}
  std::atomic<uint64_t> writes{0};

  Result<BeginOutcome> begin_dispatch(ShardId s, Epoch e, const DispatchIdentity& i, Offset o) override {
    writes++;
    return inner().begin_dispatch(s, e, i, o);
  }
  Result<std::vector<Result<BeginOutcome>>> begin_dispatch_page(ShardId s, Epoch e,
                                                                std::span<const BeginRequest> p) override {
    writes++;
    return inner().begin_dispatch_page(s, e, p);
  }
  Status write_chunks(ShardId s, Epoch e, std::span<const ChunkWrite> c) override {
    writes++;
    return inner().write_chunks(s, e, c);
  }
  Result<FinishOutcome> finish_dispatch(ShardId s, Epoch e, const DispatchId& id,
                                        const LaneAdvances& a) override {
    writes++;
    return inner().finish_dispatch(s, e, id, a);
  }
  Result<PageOutcome> finish_dispatch_page(ShardId s, Epoch e, std::span<const PageItem> p) override {
    writes++;
    return inner().finish_dispatch_page(s, e, p);
  }
};

// Two users "user<i>" of `shard`: every message between them is one record on that shard's partition.
inline std::pair<UserId, UserId> two_users_of(const ShardMap& shards, ShardId shard) {
  UserId a, b;
  for (int i = 0; a.empty() || b.empty(); ++i) {
    UserId u = UserId::parse("user" + std::to_string(i)).value();
    if (shards.shard_of(u) != shard) continue;
    (a.empty() ? a : b) = u;
  }
  return {a, b};
}

// `entries` (one user's whole mailbox, read through a store) hold messages with the given bodies exactly
// once, each at compose(epoch, its log offset), offsets 0..n-1 without a gap or a repeat, epochs never
// going down: the shard's chain is contiguous across the takeovers.
inline void expect_exactly_once(const std::vector<MailboxEntry>& entries,
                                const std::vector<std::string>& bodies) {
  ASSERT_EQ(entries.size(), bodies.size());
  std::set<std::string> seen;
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_TRUE(seen.insert(entries[i].message.body).second) << "shown twice: " << entries[i].message.body;
    EXPECT_EQ(entries[i].seq.offset().value, i)
        << "the chain has a gap or a repeat at " << entries[i].seq.to_string();
    if (i > 0) {
      EXPECT_LE(entries[i - 1].seq.epoch(), entries[i].seq.epoch());
      EXPECT_LT(entries[i - 1].seq, entries[i].seq);
    }
  }
  EXPECT_EQ(seen, std::set<std::string>(bodies.begin(), bodies.end()));
}

}  // namespace qim::testing
