#pragma once
// Shard leases: which MailboxNode may write which shard, and at which epoch (docs/decisions.md, "Shards
// are owned through leases"). A lease is (shard, owner node, epoch) with a time to live counted by the
// lease store itself (Redis PX, CQL USING TTL), never by the holder's clock, so a holder that measures
// its lease from before it sent the request always believes it for less time than the store does.
//
// Every grant is at a new, higher epoch: max(the highest epoch the shard's lease ever had, the caller's
// floor, normally the store's highest frontier epoch) + 1. The epoch outlives the lease (a released or
// expired lease keeps it), so no two grants of a shard share an epoch. Epochs stay <= 65535 (kMaxEpoch):
// a grant that would pass it fails with ResourceExhausted and the shard cannot be taken any more (fail
// closed; the operator must move the deployment to a fresh store).
//
// Nodes also announce themselves (heartbeat, with the same kind of TTL): the live nodes decide each
// node's fair share of the shards.
//
// Implementations: memory (one process, tests), redis (Lua compare-and-set on the mailbox Redis), cql
// (lightweight transactions at SERIAL). All methods are thread-safe; errors are values: Transport or
// Timeout when the store cannot be reached, kNotOwner when a lease is someone else's.

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/mailbox_seq.h"
#include "core/sharding.h"
#include "core/status.h"

namespace qim {

// The error of a lease that is held by another node, or no longer held by the caller at that epoch.
inline constexpr Errc kNotOwner = Errc::kPermissionDenied;

struct ShardLease {
  ShardId shard;
  Epoch epoch{0};     // the highest epoch ever granted for the shard (0: never leased)
  std::string owner;  // the live holder; empty when free (never leased, released or expired)
  bool free() const { return owner.empty(); }
};

class LeaseStore {
 public:
  virtual ~LeaseStore() = default;
  virtual std::string_view name() const = 0;

  // Grants `node` the lease of `shard` for `ttl` if it is free (or already `node`'s, e.g. a restart under
  // the same id: the old grant is replaced and fenced by the new epoch), at epoch max(stored, floor) + 1.
  // kNotOwner naming the holder if another node holds it; ResourceExhausted if the epoch would pass
  // 65535 (nothing written); InvalidArgument for an empty node id or a ttl below 1 ms.
  virtual Result<Epoch> try_acquire(ShardId shard, const std::string& node, std::chrono::milliseconds ttl,
                                    Epoch floor) = 0;
  // Extends `node`'s lease of `shard` at `epoch` to `ttl` from now (as the store counts). kNotOwner if the
  // shard is not (any more) leased to `node` at `epoch`: it expired, or was taken at a higher epoch.
  virtual Status renew(ShardId shard, const std::string& node, Epoch epoch,
                       std::chrono::milliseconds ttl) = 0;
  // Frees `node`'s lease of `shard` at `epoch` at once (the epoch stays). kNotOwner if not held so.
  virtual Status release(ShardId shard, const std::string& node, Epoch epoch) = 0;
  // The lease of every shard 0..shard_count-1, ascending (never leased: epoch 0, free).
  virtual Result<std::vector<ShardLease>> list(uint32_t shard_count) = 0;

  // Announces `node` as live for `ttl` from now.
  virtual Status heartbeat(const std::string& node, std::chrono::milliseconds ttl) = 0;
  // The nodes whose heartbeat has not expired, ascending.
  virtual Result<std::vector<std::string>> live_nodes() = 0;
  // Withdraws `node`'s heartbeat at once (a clean stop).
  virtual Status leave(const std::string& node) = 0;
};

// A lease store in this process only, expiring leases on `clock`: tests, and a single process whose
// nodes share nothing else. Never for two processes.
std::unique_ptr<LeaseStore> make_memory_lease_store(std::shared_ptr<const Clock> clock);

// The epoch a grant gets: max(stored, floor) + 1, or ResourceExhausted past kMaxEpoch (shared by the
// implementations so they agree on the limit and its message).
Result<Epoch> next_lease_epoch(ShardId shard, Epoch stored, Epoch floor);

}  // namespace qim
