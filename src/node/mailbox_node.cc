#include "node/mailbox_node.h"

#include "core/thread_name.h"

#include <spdlog/sinks/null_sink.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <sstream>

namespace qim {

ShardMetrics total(const std::vector<ShardMetrics>& shards) {
  ShardMetrics t;
  for (const auto& m : shards) {
    t.records += m.records;
    t.advanced += m.advanced;
    t.repeated += m.repeated;
    t.skipped += m.skipped;
    for (const auto& [why, n] : m.quarantined) t.quarantined[why] += n;
    t.catch_up += m.catch_up;
    t.pages += m.pages;
    t.paged_records += m.paged_records;
    t.retries += m.retries;
    t.lag += m.lag;
  }
  return t;
}

MailboxNode::MailboxNode(Log& mailbox_log, MailboxStore& store, DeliveryNotifier* notifier,
                         NodeOptions options)
    : log_(mailbox_log), store_(store), notifier_(notifier), options_(std::move(options)) {
  if (!options_.logger) {
    options_.logger =
        std::make_shared<spdlog::logger>("node", std::make_shared<spdlog::sinks::null_sink_mt>());
  }
}

MailboxNode::~MailboxNode() {
  stop();
}

Result<std::unique_ptr<MailboxNode::Slot>> MailboxNode::make_slot(ShardId shard, Epoch epoch,
                                                                  LeaseCheck lease) {
  auto slot = std::make_unique<Slot>();
  slot->shard = shard;
  slot->epoch = epoch;
  MailboxStore* store = &store_;
  if (lease) {
    slot->guard = std::make_unique<LeaseGuardedStore>(store_, shard, std::move(lease));
    store = slot->guard.get();
  }
  ShardWorkerOptions o;
  o.shard = shard;
  o.epoch = epoch;
  o.group = options_.group;
  o.read_batch = options_.read_batch;
  o.poll_wait = options_.poll_wait;
  o.retry_min = options_.retry_min;
  o.retry_max = options_.retry_max;
  o.commit_interval = options_.commit_interval;
  o.logger = options_.logger;
  o.quarantine = quarantine_.get();
  slot->worker = std::make_unique<ShardWorker>(log_, *store, notifier_, std::move(o));
  QIM_RETURN_IF_ERROR(slot->worker->init());  // fail closed before the worker runs
  return slot;
}

void MailboxNode::run_slot(Slot& slot) {
  slot.thread = std::thread([this, raw = &slot] {
    set_thread_name("node-s" + std::to_string(raw->shard.value));
    raw->worker->run();
    raw->ended = true;
    auto e = raw->worker->fatal();
    if (!e || !options_.on_fatal) return;
    // A shard added by the lease loop is the loop's to handle: taken over or lapsed (EpochAhead), or
    // stopped until an operator clears it (any other fatal error); the other shards go on.
    if (raw->added) return;
    options_.on_fatal(*e);
  });
}

std::vector<ShardId> MailboxNode::shard_list() const {
  std::vector<ShardId> out;
  for (const auto& [shard, slot] : slots_) out.push_back(ShardId{shard});
  return out;
}

Status MailboxNode::start() {
  std::lock_guard control(control_mu_);
  {
    std::lock_guard lock(mu_);
    if (started_) return Error(Errc::kInvariant, "mailbox node already started");
  }
  if (!options_.shards.empty() && (options_.epoch.value == 0 || options_.epoch.value > kMaxEpoch)) {
    return Error(Errc::kConfig, "QIM_EPOCH=" + std::to_string(options_.epoch.value) + ": must be 1.." +
                                    std::to_string(kMaxEpoch));
  }
  if (options_.shards.empty() && !options_.leased) {
    return Error(Errc::kConfig, "QIM_OWNED_SHARDS: the node owns no shard");
  }
  if (options_.quarantine == nullptr) {
    return Error(Errc::kConfig, "the mailbox node needs a quarantine log for records the store refuses");
  }
  if (!quarantine_) {
    quarantine_ = std::make_unique<Quarantine>(
        *options_.quarantine, options_.clock ? options_.clock : std::make_shared<SystemClock>());
  }
  std::map<uint32_t, std::unique_ptr<Slot>> slots;
  for (ShardId shard : options_.shards) {
    if (shard.value >= log_.partition_count()) {
      return Error(Errc::kConfig, "QIM_OWNED_SHARDS: shard " + std::to_string(shard.value) +
                                      " is not a partition of the mailbox log (" +
                                      std::to_string(log_.partition_count()) + " shards)");
    }
    QIM_ASSIGN_OR_RETURN(slots[shard.value], make_slot(shard, options_.epoch, {}));
  }
  RetentionSweepOptions sweep = options_.retention;
  if (!sweep.logger) sweep.logger = options_.logger;
  {
    std::lock_guard lock(mu_);
    slots_ = std::move(slots);
    for (auto& [shard, slot] : slots_) run_slot(*slot);
    sweeper_ = std::make_unique<RetentionSweeper>(store_, shard_list(), options_.clock, std::move(sweep));
    started_ = true;
  }
  sweeper_->start();
  return {};
}

Status MailboxNode::add_shard(ShardId shard, Epoch epoch, LeaseCheck lease) {
  std::lock_guard control(control_mu_);
  if (epoch.value == 0 || epoch.value > kMaxEpoch) {
    return Error(Errc::kInvalidArgument, "shard " + std::to_string(shard.value) + ": epoch " +
                                             std::to_string(epoch.value) + " is outside 1.." +
                                             std::to_string(kMaxEpoch));
  }
  if (shard.value >= log_.partition_count()) {
    return Error(Errc::kInvalidArgument, "shard " + std::to_string(shard.value) +
                                             " is not a partition of the mailbox log (" +
                                             std::to_string(log_.partition_count()) + " shards)");
  }
  {
    std::lock_guard lock(mu_);
    if (!started_ || stopped_) {
      return Error(Errc::kInvariant, std::string("add_shard on a mailbox node that is ") +
                                         (stopped_ ? "stopped" : "not started"));
    }
    if (slots_.contains(shard.value)) {
      return Error(Errc::kInvariant, "the node already owns shard " + std::to_string(shard.value));
    }
  }
  QIM_ASSIGN_OR_RETURN(auto slot, make_slot(shard, epoch, std::move(lease)));
  slot->added = true;
  std::lock_guard lock(mu_);
  run_slot(*slot);
  slots_[shard.value] = std::move(slot);
  sweeper_->set_shards(shard_list());
  options_.logger->info("shard {}: now owned at epoch {}", shard.value, epoch.value);
  return {};
}

Status MailboxNode::remove_shard(ShardId shard, Removal how, std::chrono::milliseconds limit) {
  std::lock_guard control(control_mu_);
  Slot* slot = nullptr;
  {
    std::lock_guard lock(mu_);
    auto it = slots_.find(shard.value);
    if (it == slots_.end())
      return Error(Errc::kNotFound, "the node does not own shard " + std::to_string(shard.value));
    slot = it->second.get();  // stays in slots_ (metrics) until its thread has ended
  }
  Status result;
  if (how == Removal::kGraceful) {
    slot->worker->request_drain();
    const auto deadline = std::chrono::steady_clock::now() + limit;
    // A worker that already ended (the node was stopped) has nothing more to drain.
    while (!slot->worker->drained() && !slot->worker->fatal() && !slot->ended) {
      if (std::chrono::steady_clock::now() >= deadline) {
        result = Error(Errc::kTimeout, "shard " + std::to_string(shard.value) + " did not drain within " +
                                           std::to_string(limit.count()) + " ms; " +
                                           std::to_string(slot->worker->metrics().lag) + " records left");
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    slot->worker->request_stop();  // commits the position it reached
  } else {
    slot->worker->request_abort();
  }
  if (slot->thread.joinable()) slot->thread.join();
  std::unique_ptr<Slot> gone;
  {
    std::lock_guard lock(mu_);
    auto it = slots_.find(shard.value);
    gone = std::move(it->second);
    slots_.erase(it);
    if (sweeper_) sweeper_->set_shards(shard_list());
  }
  options_.logger->info("shard {}: no longer owned (epoch {}, {})", shard.value, gone->epoch.value,
                        how == Removal::kGraceful ? "given up after a drain" : "stopped at once");
  return result;
}

std::vector<std::pair<ShardId, Epoch>> MailboxNode::owned() const {
  std::lock_guard lock(mu_);
  std::vector<std::pair<ShardId, Epoch>> out;
  for (const auto& [shard, slot] : slots_) out.emplace_back(ShardId{shard}, slot->epoch);
  return out;
}

Result<MailboxSeq> MailboxNode::check_shard(ShardId shard) const {
  if (shard.value >= log_.partition_count()) {
    return Error(Errc::kInvalidArgument, "shard " + std::to_string(shard.value) +
                                             " is not a partition of the mailbox log (" +
                                             std::to_string(log_.partition_count()) + " shards)");
  }
  QIM_ASSIGN_OR_RETURN(auto watermarks, store_.lane_watermarks(shard, Epoch{kMaxEpoch}));
  const MailboxSeq frontier = watermarks[0];
  QIM_ASSIGN_OR_RETURN(Offset end, log_.end_offset(shard.value));
  const uint64_t next = frontier.is_zero() ? 0 : frontier.offset().value + 1;
  if (next > end.value) {  // the same check as ShardWorker::init, before an epoch is spent on it
    return Error(Errc::kInvariant, "shard " + std::to_string(shard.value) + ": the store's frontier " +
                                       frontier.to_string() + " lies beyond the end of the mailbox log (" +
                                       std::to_string(end.value) +
                                       " records): the log and the store do not belong together");
  }
  return frontier;
}

std::optional<Error> MailboxNode::shard_error(ShardId shard) const {
  std::lock_guard lock(mu_);
  auto it = slots_.find(shard.value);
  if (it == slots_.end()) return std::nullopt;
  return it->second->worker->fatal();
}

Status MailboxNode::drain(std::chrono::milliseconds limit, const std::function<void(uint64_t)>& progress) {
  std::lock_guard control(control_mu_);
  std::vector<ShardWorker*> workers;
  {
    std::lock_guard lock(mu_);
    for (auto& [shard, slot] : slots_) workers.push_back(slot->worker.get());
  }
  for (auto* w : workers) w->request_drain();
  const auto deadline = std::chrono::steady_clock::now() + limit;
  auto next_progress = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (true) {
    bool done = true;
    for (auto* w : workers) done = done && (w->drained() || w->fatal());
    if (done) break;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      const uint64_t left = total(metrics()).lag;
      stop_locked();
      return Error(Errc::kTimeout, "mailbox node did not drain within " + std::to_string(limit.count()) +
                                       " ms; " + std::to_string(left) + " records left");
    }
    if (progress && now >= next_progress) {
      progress(total(metrics()).lag);
      next_progress = now + std::chrono::seconds(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop_locked();
  if (auto e = fatal()) return *e;
  return {};
}

void MailboxNode::stop() {
  std::lock_guard control(control_mu_);
  stop_locked();
}

void MailboxNode::stop_locked() {
  std::vector<Slot*> slots;
  {
    std::lock_guard lock(mu_);
    stopped_ = started_;
    for (auto& [shard, slot] : slots_) slots.push_back(slot.get());
  }
  if (sweeper_) sweeper_->stop();
  for (auto* s : slots) s->worker->request_stop();
  for (auto* s : slots) {
    if (s->thread.joinable()) s->thread.join();
  }
}

std::optional<Error> MailboxNode::fatal() const {
  std::lock_guard lock(mu_);
  for (const auto& [shard, slot] : slots_) {
    auto e = slot->worker->fatal();
    if (!e || slot->added) continue;
    return e;
  }
  return std::nullopt;
}

std::vector<ShardMetrics> MailboxNode::metrics() const {
  std::lock_guard lock(mu_);
  std::vector<ShardMetrics> out;
  for (const auto& [shard, slot] : slots_) out.push_back(slot->worker->metrics());
  return out;
}

RetentionMetrics MailboxNode::retention_metrics() const {
  std::lock_guard lock(mu_);
  return sweeper_ ? sweeper_->metrics() : RetentionMetrics{};
}

Result<std::vector<ShardId>> parse_shard_set(const std::string& text, uint32_t shard_count) {
  auto number = [&](std::string_view s) -> Result<uint32_t> {
    uint32_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size()) {
      return Error(Errc::kInvalidArgument, "'" + std::string(s) + "' is not a shard number");
    }
    if (v >= shard_count) {
      return Error(Errc::kInvalidArgument, "shard " + std::to_string(v) + " is not below the shard count " +
                                               std::to_string(shard_count));
    }
    return v;
  };
  std::set<uint32_t> shards;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    const auto dash = part.find('-');
    QIM_ASSIGN_OR_RETURN(uint32_t lo, number(std::string_view(part).substr(0, dash)));
    uint32_t hi = lo;
    if (dash != std::string::npos) {
      QIM_ASSIGN_OR_RETURN(hi, number(std::string_view(part).substr(dash + 1)));
    }
    if (hi < lo) return Error(Errc::kInvalidArgument, "shard range '" + part + "' runs backwards");
    for (uint32_t s = lo; s <= hi; ++s) shards.insert(s);
  }
  if (shards.empty()) return Error(Errc::kInvalidArgument, "'" + text + "' names no shard");
  std::vector<ShardId> out;
  for (uint32_t s : shards) out.push_back(ShardId{s});
  return out;
}

}  // namespace qim
