#include "node/lease/shard_ownership.h"
#include "core/thread_name.h"

#include <spdlog/sinks/null_sink.h>

#include <algorithm>

namespace qim {

OwnershipOptions with_defaults(OwnershipOptions o) {
  // Three scans inside the window the holder believes a lease (ttl - margin), not inside the ttl: on CQL
  // the margin is the 5 s call timeout, and at ttl/3 a renewal (with the heartbeat and the renewals of
  // the shards before it in the same scan) had only 1.7 s of the 10 s ttl to land before the shard's
  // writes stopped. A slow lease store (an LWT through a node of the ring just started) lapsed leases
  // while every replica was up. The drain budget of a scan follows, so a graceful give-up cannot push
  // the next renewals past the window either.
  const auto window = o.ttl - o.margin;
  if (o.scan.count() == 0) o.scan = window / 3;
  if (o.release_budget.count() == 0) o.release_budget = window / 3;
  if (o.take_budget.count() == 0) o.take_budget = window / 3;
  if (!o.clock) o.clock = std::make_shared<MonotonicClock>();
  if (!o.logger) {
    o.logger = std::make_shared<spdlog::logger>("ownership", std::make_shared<spdlog::sinks::null_sink_mt>());
  }
  return o;
}

Status validate(const OwnershipOptions& raw) {
  const OwnershipOptions o = with_defaults(raw);
  if (o.node_id.empty()) return Error(Errc::kConfig, "QIM_NODE_ID: the node has no id");
  if (o.shard_count == 0) return Error(Errc::kConfig, "QIM_SHARDS: no shard to own");
  if (o.ttl.count() < 30) {
    return Error(Errc::kConfig, "QIM_SHARD_LEASE_TTL_MS=" + std::to_string(o.ttl.count()) + ": at least 30");
  }
  // The holder must believe a lease for more than a third of its ttl, and for more than one scan.
  const auto window = o.ttl - o.margin;
  if (o.margin.count() <= 0 || o.scan.count() <= 0 || window <= o.scan || 3 * window <= o.ttl) {
    return Error(Errc::kConfig, "QIM_SHARD_LEASE_MARGIN_MS=" + std::to_string(o.margin.count()) +
                                    ": must be above 0 and below two thirds of the lease ttl (" +
                                    std::to_string(o.ttl.count()) +
                                    " ms), leaving more than one renewal "
                                    "interval (" +
                                    std::to_string(o.scan.count()) + " ms)");
  }
  return {};
}

ShardOwnership::ShardOwnership(MailboxNode& node, LeaseStore& leases, MailboxStore& store,
                               OwnershipOptions options)
    : node_(node),
      leases_(leases),
      store_(store),
      options_(with_defaults(std::move(options))),
      clock_(options_.clock),
      log_(*options_.logger) {}

ShardOwnership::~ShardOwnership() {
  stop();
}

Status ShardOwnership::start() {
  QIM_RETURN_IF_ERROR(validate(options_));
  if (thread_.joinable()) return Error(Errc::kInvariant, "shard ownership already started");
  log_.info(
      "shard ownership: node {}, {} shards, lease ttl {} ms, stops writing {} ms before, scan every {} ms",
      options_.node_id, options_.shard_count, options_.ttl.count(), options_.margin.count(),
      options_.scan.count());
  tick();
  thread_ = std::thread([this] {
    set_thread_name("leases");
    int64_t next = now() + options_.scan.count();
    while (true) {
      {
        std::unique_lock lock(mu_);
        // Woken early only by stop(); the scan schedule follows the injected clock in wall-time steps.
        const int64_t wait = std::clamp<int64_t>(next - now(), 1, options_.scan.count());
        if (cv_.wait_for(lock, std::chrono::milliseconds(wait), [this] { return stop_; })) return;
      }
      if (now() < next) continue;
      next = now() + options_.scan.count();
      tick();
    }
  });
  return {};
}

void ShardOwnership::stop() {
  {
    std::lock_guard lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (const auto& [shard, held] : std::map<uint32_t, Held>(held_)) {
    give_up(ShardId{shard}, held, MailboxNode::Removal::kGraceful, "the node stops");
  }
  if (Status s = leases_.leave(options_.node_id); !s.ok()) {
    log_.warn("shard ownership: withdrawing the heartbeat of {} failed: {}", options_.node_id,
              s.error().to_string());
  }
}

void ShardOwnership::tick() {
  if (Status s = leases_.heartbeat(options_.node_id, options_.ttl); !s.ok()) {
    log_.warn("shard ownership: heartbeat failed: {}", s.error().to_string());
  }
  renew_all();
  apply_clears();
  rebalance();
  std::lock_guard lock(mu_);
  metrics_.scans++;
  metrics_.held.clear();
  for (const auto& [shard, held] : held_) metrics_.held.emplace_back(ShardId{shard}, held.epoch);
  metrics_.stopped.clear();
  for (const auto& [shard, why] : stopped_) metrics_.stopped.emplace_back(ShardId{shard}, why);
}

Status ShardOwnership::clear(ShardId shard) {
  std::lock_guard lock(mu_);
  const bool stopped = std::any_of(metrics_.stopped.begin(), metrics_.stopped.end(),
                                   [&](const auto& s) { return s.first == shard; });
  if (!stopped) {
    return Error(Errc::kNotFound, "shard " + std::to_string(shard.value) + " is not stopped on node " +
                                      options_.node_id + " (at its last scan)");
  }
  clears_.insert(shard.value);
  return {};
}

void ShardOwnership::apply_clears() {
  std::set<uint32_t> clears;
  {
    std::lock_guard lock(mu_);
    clears.swap(clears_);
  }
  for (uint32_t s : clears) {
    auto held = held_.find(s);
    if (held == held_.end() || !stopped_.contains(s)) continue;  // lost or moved meanwhile
    if (Status started = start_worker(ShardId{s}, held->second); !started.ok()) {
      stopped_[s] = started.error().to_string();
      log_.critical(
          "shard {}: cleared by the operator, but its worker did not start at epoch {}: {}; the "
          "shard stays stopped (lease kept)",
          s, held->second.epoch.value, started.error().to_string());
      continue;
    }
    stopped_.erase(s);
    retry_.erase(s);
    log_.warn("shard {}: cleared by the operator: its worker restarts at epoch {}", s,
              held->second.epoch.value);
  }
}

Status ShardOwnership::start_worker(ShardId shard, const Held& held) {
  auto clock = clock_;
  auto deadline = held.deadline_ms;
  return node_.add_shard(shard, held.epoch, [clock, deadline] { return clock->now_ms() < deadline->load(); });
}

void ShardOwnership::back_off(ShardId shard, const std::string& why) {
  Retry& r = retry_[shard.value];
  r.failures++;
  const int64_t scan = options_.scan.count();
  const int64_t cap = std::max<int64_t>(scan, options_.retry_max.count());
  int64_t delay = scan;
  for (uint32_t i = 1; i < r.failures && delay < cap; ++i) delay *= 2;
  delay = std::min(delay, cap);
  r.next_ms = now() + delay;
  log_.error("shard {}: {} (failure {} in a row); next try in {} ms", shard.value, why, r.failures, delay);
  std::lock_guard lock(mu_);
  metrics_.take_failures++;
}

void ShardOwnership::hold_stopped(ShardId shard, const Error& error) {
  Status removed = node_.remove_shard(shard, MailboxNode::Removal::kImmediate);
  if (!removed.ok() && removed.code() != Errc::kNotFound) {
    log_.warn("shard {}: removing its stopped worker: {}", shard.value, removed.error().to_string());
  }
  stopped_[shard.value] = error.to_string();
  log_.critical(
      "shard {}: STOPPED: its worker stopped on a fatal error at epoch {}: {}. The node keeps the lease, so "
      "no node retakes the shard at a new epoch, and nothing writes it until an operator fixes the cause and "
      "runs `qim admin shard clear {}` (or moves it away: qim admin shard move)",
      shard.value, held_.at(shard.value).epoch.value, error.to_string(), shard.value);
}

void ShardOwnership::give_up(ShardId shard, const Held& held, MailboxNode::Removal how, const char* why) {
  const bool graceful = how == MailboxNode::Removal::kGraceful;
  Status removed = node_.remove_shard(shard, how, options_.release_budget);
  if (!removed.ok() && removed.code() != Errc::kNotFound) {
    log_.warn("shard {}: giving it up ({}): {}", shard.value, why, removed.error().to_string());
  }
  // Released only after the worker stopped: nobody may take the shard while this node still writes it.
  // A lost lease is released too when it is still ours (a worker fenced by the store): best effort.
  if (Status r = leases_.release(shard, options_.node_id, held.epoch); !r.ok() && graceful) {
    log_.warn("shard {}: releasing its lease at epoch {} failed ({}): it frees itself within the ttl",
              shard.value, held.epoch.value, r.error().to_string());
  }
  held_.erase(shard.value);
  moved_in_.erase(shard.value);
  stopped_.erase(shard.value);
  log_.info("shard {}: {} (epoch {}): {}", shard.value, graceful ? "given up" : "lost", held.epoch.value,
            why);
  std::lock_guard lock(mu_);
  (graceful ? metrics_.released : metrics_.lost)++;
}

void ShardOwnership::renew_all() {
  for (const auto& [shard_value, held] : std::map<uint32_t, Held>(held_)) {
    const ShardId shard{shard_value};
    if (auto e = stopped_.contains(shard_value) ? std::nullopt : node_.shard_error(shard)) {
      if (e->code() == Errc::kEpochAhead) {  // taken over or lapsed: the lease is gone anyway
        give_up(shard, held, MailboxNode::Removal::kImmediate,
                ("its worker stopped: " + e->to_string()).c_str());
        continue;
      }
      hold_stopped(shard, *e);  // and the renewal below keeps its lease
    }
    const int64_t sent = now();
    Status renewed = leases_.renew(shard, options_.node_id, held.epoch, options_.ttl);
    if (renewed.ok()) {
      held.deadline_ms->store(sent + (options_.ttl - options_.margin).count());
      // A renewal slower than a scan eats into the slack before the shard's writes would stop: say so
      // before it lapses a lease.
      if (const int64_t took = now() - sent; took > options_.scan.count())
        log_.warn(
            "shard {}: renewing the lease took {} ms (a scan is {} ms; writes stop {} ms after a "
            "renewal is sent)",
            shard_value, took, options_.scan.count(), (options_.ttl - options_.margin).count());
      continue;
    }
    if (renewed.code() == kNotOwner) {
      give_up(shard, held, MailboxNode::Removal::kImmediate, renewed.error().to_string().c_str());
      continue;
    }
    {
      std::lock_guard lock(mu_);
      metrics_.renew_failures++;
    }
    log_.warn("shard {}: renewing the lease failed: {}", shard_value, renewed.error().to_string());
    if (now() >= held.deadline_ms->load()) {
      give_up(shard, held, MailboxNode::Removal::kImmediate, "its lease could not be renewed in time");
    }
  }
}

bool ShardOwnership::take(ShardId shard, bool moved_in) {
  if (auto r = retry_.find(shard.value); r != retry_.end() && now() < r->second.next_ms) return false;
  // Checked before an epoch is spent: a shard whose log and store do not belong together is never
  // acquired. The frontier is also the floor: never below an epoch the store has seen, even if the lease
  // store forgot the shard.
  auto frontier = node_.check_shard(shard);
  if (!frontier.ok()) {
    back_off(shard, "cannot be taken (no lease asked for): " + frontier.error().to_string());
    return false;
  }
  const int64_t sent = now();
  auto epoch = leases_.try_acquire(shard, options_.node_id, options_.ttl, frontier->epoch());
  if (!epoch.ok()) {
    if (epoch.code() != kNotOwner) back_off(shard, "taking its lease failed: " + epoch.error().to_string());
    return false;
  }
  Held held{*epoch, std::make_shared<std::atomic<int64_t>>(sent + (options_.ttl - options_.margin).count())};
  if (Status added = start_worker(shard, held); !added.ok()) {
    (void)leases_.release(shard, options_.node_id, *epoch);
    back_off(shard, "leased at epoch " + std::to_string(epoch->value) +
                        " but its worker did not start (lease released): " + added.error().to_string());
    return false;
  }
  retry_.erase(shard.value);
  held_[shard.value] = held;
  free_since_.erase(shard.value);
  if (moved_in) moved_in_.insert(shard.value);
  log_.info("shard {}: taken at epoch {} (store frontier {}){}", shard.value, epoch->value,
            frontier->to_string(), moved_in ? ", moved here by the operator" : "");
  std::lock_guard lock(mu_);
  metrics_.acquired++;
  if (moved_in) metrics_.moved_in++;
  return true;
}

std::map<uint32_t, ShardOwnership::Held>::iterator ShardOwnership::next_to_give_up() {
  // A stopped shard is never given up to balance: the next owner would take it at a new epoch and stop.
  for (auto it = held_.rbegin(); it != held_.rend(); ++it) {
    if (!moved_in_.contains(it->first) && !stopped_.contains(it->first)) return std::prev(it.base());
  }
  for (auto it = held_.rbegin(); it != held_.rend(); ++it) {
    if (!stopped_.contains(it->first)) return std::prev(it.base());
  }
  return held_.end();
}

void ShardOwnership::rebalance() {
  auto leases = leases_.list(options_.shard_count);
  auto live = leases_.live_nodes();
  if (!leases.ok() || !live.ok()) {
    log_.warn("shard ownership: cannot list {}: {}", leases.ok() ? "the live nodes" : "the leases",
              (leases.ok() ? live.error() : leases.error()).to_string());
    return;
  }
  uint32_t nodes = static_cast<uint32_t>(live->size());
  if (std::find(live->begin(), live->end(), options_.node_id) == live->end())
    ++nodes;  // our heartbeat failed
  const uint32_t share = (options_.shard_count + nodes - 1) / nodes;
  {
    std::lock_guard lock(mu_);
    metrics_.live_nodes = nodes;
    metrics_.fair_share = share;
  }

  // Planned moves away from this node first, whatever the share: the operator is waiting for them. Each
  // drains like any graceful give-up; the target takes the shard once the lease is released. They share
  // the scan's drain budget with the give-ups below (the rest next scan), so the renewals of the next
  // scan are not pushed past the window either.
  const int64_t budget_end = now() + options_.release_budget.count();
  for (const ShardLease& l : *leases) {
    if (now() >= budget_end) break;
    auto it = held_.find(l.shard.value);
    if (it == held_.end() || l.moving_to.empty() || l.moving_to == options_.node_id) continue;
    const Held held = it->second;
    give_up(l.shard, held, MailboxNode::Removal::kGraceful, ("moved to " + l.moving_to).c_str());
    std::lock_guard lock(mu_);
    metrics_.moved_out++;
  }

  // Above the share: give up the highest shards, drained, within the budget (the rest next scan); a
  // shard moved here is given up last.
  while (held_.size() > share && now() < budget_end) {
    auto next = next_to_give_up();
    if (next == held_.end()) break;
    const Held held = next->second;
    give_up(ShardId{next->first}, held, MailboxNode::Removal::kGraceful, "rebalancing to the fair share");
  }

  // Below the share: take free shards, lowest first. A shard free for a whole ttl is taken regardless.
  // A shard being moved is taken by its target only, and by the target whatever its share. Takes share a
  // budget, so slow ones cannot push the next scan's renewals past the window; the rest wait a scan.
  const int64_t t = now();
  const int64_t take_end = t + options_.take_budget.count();
  for (const ShardLease& l : *leases) {
    if (!l.free() || held_.contains(l.shard.value)) {
      free_since_.erase(l.shard.value);
      continue;
    }
    if (!l.moving_to.empty()) {
      free_since_.erase(l.shard.value);
      if (l.moving_to == options_.node_id && now() < take_end) take(l.shard, /*moved_in=*/true);
      continue;
    }
    const int64_t since = free_since_.try_emplace(l.shard.value, t).first->second;
    const bool long_free = t - since >= options_.ttl.count();
    if ((held_.size() < share || long_free) && now() < take_end) take(l.shard);
  }
}

OwnershipMetrics ShardOwnership::metrics() const {
  std::lock_guard lock(mu_);
  return metrics_;
}

}  // namespace qim
