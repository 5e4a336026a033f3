// The in-process lease store: a map under a mutex, leases expiring on the injected clock.
#include <algorithm>
#include <map>
#include <mutex>

#include "node/lease/lease_store.h"

namespace qim {

Result<Epoch> next_lease_epoch(ShardId shard, Epoch stored, Epoch floor) {
  const uint32_t base = std::max(stored.value, floor.value);
  if (base >= kMaxEpoch) {
    return Error(Errc::kResourceExhausted,
                 "shard " + std::to_string(shard.value) + ": no epoch above " + std::to_string(base) +
                     " is left (epochs stop at " + std::to_string(kMaxEpoch) +
                     "): the shard cannot be taken over any more; move the deployment to a fresh store");
  }
  return Epoch{base + 1};
}

Error move_refusal(ShardId shard, const std::string& target) {
  return Error(kNotOwner, "shard " + std::to_string(shard.value) + " is being moved to " + target +
                              " (qim admin shard move): only " + target + " may take it");
}
Error move_pending(ShardId shard, const std::string& target) {
  return Error(Errc::kInvariant,
               "shard " + std::to_string(shard.value) + ": a move to " + target + " is already in progress");
}
Error already_holds(ShardId shard, const std::string& to, Epoch epoch) {
  return Error(Errc::kInvariant, "shard " + std::to_string(shard.value) + " is already owned by " + to +
                                     " (epoch " + std::to_string(epoch.value) + ")");
}
Error no_move(ShardId shard, const std::string& to) {
  return Error(Errc::kNotFound,
               "shard " + std::to_string(shard.value) + ": no move to " + to + " is pending");
}

namespace {

class MemoryLeaseStore final : public LeaseStore {
 public:
  explicit MemoryLeaseStore(std::shared_ptr<const Clock> clock) : clock_(std::move(clock)) {}

  std::string_view name() const override { return "memory"; }

  Result<Epoch> try_acquire(ShardId shard, const std::string& node, std::chrono::milliseconds ttl,
                            Epoch floor) override {
    if (node.empty() || ttl.count() < 1)
      return Error(Errc::kInvalidArgument, "lease: empty node id or ttl < 1 ms");
    std::lock_guard lock(mu_);
    Entry& e = leases_[shard.value];
    if (live(e) && e.owner != node) return held(shard, e);
    if (moving(e) && e.moving_to != node) return moved(shard, e);
    QIM_ASSIGN_OR_RETURN(Epoch next, next_lease_epoch(shard, e.epoch, floor));
    e.epoch = next;
    e.owner = node;
    e.expires_ms = clock_->now_ms() + ttl.count();
    e.moving_to.clear();  // the move, if any, is done
    return next;
  }

  Status renew(ShardId shard, const std::string& node, Epoch epoch, std::chrono::milliseconds ttl) override {
    std::lock_guard lock(mu_);
    Entry& e = leases_[shard.value];
    if (!live(e) || e.owner != node || e.epoch != epoch) return not_held(shard, node, epoch, e);
    e.expires_ms = clock_->now_ms() + ttl.count();
    return {};
  }

  Status release(ShardId shard, const std::string& node, Epoch epoch) override {
    std::lock_guard lock(mu_);
    Entry& e = leases_[shard.value];
    if (!live(e) || e.owner != node || e.epoch != epoch) return not_held(shard, node, epoch, e);
    e.owner.clear();
    return {};
  }

  Result<std::vector<ShardLease>> list(uint32_t shard_count) override {
    std::lock_guard lock(mu_);
    std::vector<ShardLease> out;
    for (uint32_t s = 0; s < shard_count; ++s) {
      ShardLease l{ShardId{s}, Epoch{0}, ""};
      if (auto it = leases_.find(s); it != leases_.end()) {
        l.epoch = it->second.epoch;
        if (live(it->second)) l.owner = it->second.owner;
        if (moving(it->second)) l.moving_to = it->second.moving_to;
      }
      out.push_back(l);
    }
    return out;
  }

  Status request_move(ShardId shard, const std::string& to, std::chrono::milliseconds ttl) override {
    if (to.empty() || ttl.count() < 1)
      return Error(Errc::kInvalidArgument, "move: empty node id or ttl < 1 ms");
    std::lock_guard lock(mu_);
    Entry& e = leases_[shard.value];
    if (moving(e)) return move_pending(shard, e.moving_to);
    if (live(e) && e.owner == to) return already_holds(shard, to, e.epoch);
    e.moving_to = to;
    e.move_expires_ms = clock_->now_ms() + ttl.count();
    return {};
  }

  Status cancel_move(ShardId shard, const std::string& to) override {
    std::lock_guard lock(mu_);
    Entry& e = leases_[shard.value];
    if (!moving(e) || e.moving_to != to) return no_move(shard, to);
    e.moving_to.clear();
    return {};
  }

  Status heartbeat(const std::string& node, std::chrono::milliseconds ttl) override {
    std::lock_guard lock(mu_);
    nodes_[node] = clock_->now_ms() + ttl.count();
    return {};
  }

  Result<std::vector<std::string>> live_nodes() override {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const auto& [node, expires] : nodes_) {
      if (expires > clock_->now_ms()) out.push_back(node);
    }
    return out;
  }

  Status leave(const std::string& node) override {
    std::lock_guard lock(mu_);
    nodes_.erase(node);
    return {};
  }

 private:
  struct Entry {
    Epoch epoch{0};
    std::string owner;
    int64_t expires_ms = 0;
    std::string moving_to;  // a pending move's target
    int64_t move_expires_ms = 0;
  };
  bool live(const Entry& e) const { return !e.owner.empty() && e.expires_ms > clock_->now_ms(); }
  bool moving(const Entry& e) const { return !e.moving_to.empty() && e.move_expires_ms > clock_->now_ms(); }
  static Error moved(ShardId shard, const Entry& e) { return move_refusal(shard, e.moving_to); }
  static Error held(ShardId shard, const Entry& e) {
    return Error(kNotOwner, "shard " + std::to_string(shard.value) + " is leased to " + e.owner +
                                " at epoch " + std::to_string(e.epoch.value));
  }
  Error not_held(ShardId shard, const std::string& node, Epoch epoch, const Entry& e) const {
    return Error(kNotOwner, "shard " + std::to_string(shard.value) + " is not leased to " + node +
                                " at epoch " + std::to_string(epoch.value) + " (now: " +
                                (live(e) ? e.owner + " at epoch " + std::to_string(e.epoch.value) : "free") +
                                ")");
  }

  std::shared_ptr<const Clock> clock_;
  std::mutex mu_;
  std::map<uint32_t, Entry> leases_;
  std::map<std::string, int64_t> nodes_;
};

}  // namespace

std::unique_ptr<LeaseStore> make_memory_lease_store(std::shared_ptr<const Clock> clock) {
  return std::make_unique<MemoryLeaseStore>(clock ? std::move(clock) : std::make_shared<SystemClock>());
}

}  // namespace qim
