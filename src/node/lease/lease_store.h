#pragma once
// Shard leases: which MailboxNode may write which shard, and at which epoch
// (docs/adr/0018-shard-leases.md). A lease is (shard, owner node, epoch) with a time to live counted by the
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
// A planned hand-over (`qim admin shard move N --to NODE`, docs/operations.md) is a move record beside
// the shard's lease, with a TTL of its own: while it is pending, only its target may take the shard
// (try_acquire by any other node is refused), the holder gives the shard up gracefully at its next scan
// (ShardOwnership), and the target's grant ends the move in the same atomic step. A target that never
// takes the shard (it died) delays the shard by the move's TTL at most.
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
  Epoch epoch{0};         // the highest epoch ever granted for the shard (0: never leased)
  std::string owner;      // the live holder; empty when free (never leased, released or expired)
  std::string moving_to;  // the target of a pending move (request_move); empty when none
  bool free() const { return owner.empty(); }
};

class LeaseStore {
 public:
  virtual ~LeaseStore() = default;
  virtual std::string_view name() const = 0;

  // Grants `node` the lease of `shard` for `ttl` if it is free (or already `node`'s, e.g. a restart under
  // the same id: the old grant is replaced and fenced by the new epoch), at epoch max(stored, floor) + 1.
  // kNotOwner naming the holder if another node holds it; ResourceExhausted if the epoch would pass
  // 65535 (nothing written); InvalidArgument for an empty node id or a ttl below 1 ms. While a move of
  // the shard is pending, kNotOwner naming the move for any node but its target; the target's grant
  // clears the move.
  virtual Result<Epoch> try_acquire(ShardId shard, const std::string& node, std::chrono::milliseconds ttl,
                                    Epoch floor) = 0;
  // Extends `node`'s lease of `shard` at `epoch` to `ttl` from now (as the store counts). kNotOwner if the
  // shard is not (any more) leased to `node` at `epoch`: it expired, or was taken at a higher epoch.
  virtual Status renew(ShardId shard, const std::string& node, Epoch epoch,
                       std::chrono::milliseconds ttl) = 0;
  // Frees `node`'s lease of `shard` at `epoch` at once (the epoch stays). kNotOwner if not held so.
  virtual Status release(ShardId shard, const std::string& node, Epoch epoch) = 0;
  // The lease of every shard 0..shard_count-1, ascending (never leased: epoch 0, free), with its pending
  // move if any.
  virtual Result<std::vector<ShardLease>> list(uint32_t shard_count) = 0;

  // Records a move of `shard` to `to`, pending for `ttl` (as the store counts) or until `to` takes the
  // shard. The lease itself is untouched: its holder gives it up (ShardOwnership). InvalidArgument for an
  // empty node id or a ttl below 1 ms; Invariant, nothing written, if a move of the shard is pending
  // already (naming its target) or `to` holds the shard now.
  virtual Status request_move(ShardId shard, const std::string& to, std::chrono::milliseconds ttl) = 0;
  // Withdraws the pending move of `shard` to `to` (an operator giving up on it). NotFound if no move to
  // `to` is pending (none, another target's, or already completed by the grant).
  virtual Status cancel_move(ShardId shard, const std::string& to) = 0;

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

// The errors of the move records, in the same words on every implementation.
Error move_refusal(ShardId shard, const std::string& target);  // kNotOwner: a grant to a non-target
Error move_pending(ShardId shard, const std::string& target);  // Invariant: request_move over a move
Error already_holds(ShardId shard, const std::string& to, Epoch epoch);  // Invariant: moving to its holder
Error no_move(ShardId shard, const std::string& to);                     // NotFound: cancel_move

}  // namespace qim
