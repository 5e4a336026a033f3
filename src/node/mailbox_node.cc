#include "node/mailbox_node.h"

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

Status MailboxNode::start() {
  if (!workers_.empty()) return Error(Errc::kInvariant, "mailbox node already started");
  if (options_.epoch.value == 0 || options_.epoch.value > kMaxEpoch) {
    return Error(Errc::kConfig, "QIM_EPOCH=" + std::to_string(options_.epoch.value) + ": must be 1.." +
                                    std::to_string(kMaxEpoch));
  }
  if (options_.shards.empty()) return Error(Errc::kConfig, "QIM_OWNED_SHARDS: the node owns no shard");
  if (options_.quarantine == nullptr) {
    return Error(Errc::kConfig, "the mailbox node needs a quarantine log for records the store refuses");
  }
  if (!quarantine_) {
    quarantine_ = std::make_unique<Quarantine>(
        *options_.quarantine, options_.clock ? options_.clock : std::make_shared<SystemClock>());
  }
  std::vector<std::unique_ptr<ShardWorker>> workers;
  for (ShardId shard : options_.shards) {
    if (shard.value >= log_.partition_count()) {
      return Error(Errc::kConfig, "QIM_OWNED_SHARDS: shard " + std::to_string(shard.value) +
                                      " is not a partition of the mailbox log (" +
                                      std::to_string(log_.partition_count()) + " shards)");
    }
    ShardWorkerOptions o;
    o.shard = shard;
    o.epoch = options_.epoch;
    o.group = options_.group;
    o.read_batch = options_.read_batch;
    o.poll_wait = options_.poll_wait;
    o.retry_min = options_.retry_min;
    o.retry_max = options_.retry_max;
    o.commit_interval = options_.commit_interval;
    o.logger = options_.logger;
    o.quarantine = quarantine_.get();
    auto worker = std::make_unique<ShardWorker>(log_, store_, notifier_, std::move(o));
    QIM_RETURN_IF_ERROR(worker->init());  // fail closed before any worker runs
    workers.push_back(std::move(worker));
  }
  workers_ = std::move(workers);
  for (auto& w : workers_) {
    threads_.emplace_back([this, raw = w.get()] {
      raw->run();
      if (auto e = raw->fatal(); e && options_.on_fatal) options_.on_fatal(*e);
    });
  }
  RetentionSweepOptions sweep = options_.retention;
  if (!sweep.logger) sweep.logger = options_.logger;
  sweeper_ = std::make_unique<RetentionSweeper>(store_, options_.shards, options_.clock, std::move(sweep));
  sweeper_->start();
  return {};
}

Status MailboxNode::drain(std::chrono::milliseconds limit, const std::function<void(uint64_t)>& progress) {
  for (auto& w : workers_) w->request_drain();
  const auto deadline = std::chrono::steady_clock::now() + limit;
  auto next_progress = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (true) {
    bool done = true;
    for (auto& w : workers_) done = done && (w->drained() || w->fatal());
    if (done) break;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      const uint64_t left = total(metrics()).lag;
      stop();
      return Error(Errc::kTimeout, "mailbox node did not drain within " + std::to_string(limit.count()) +
                                       " ms; " + std::to_string(left) + " records left");
    }
    if (progress && now >= next_progress) {
      progress(total(metrics()).lag);
      next_progress = now + std::chrono::seconds(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop();
  if (auto e = fatal()) return *e;
  return {};
}

void MailboxNode::stop() {
  if (sweeper_) sweeper_->stop();
  for (auto& w : workers_) w->request_stop();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

std::optional<Error> MailboxNode::fatal() const {
  for (const auto& w : workers_) {
    if (auto e = w->fatal()) return e;
  }
  return std::nullopt;
}

std::vector<ShardMetrics> MailboxNode::metrics() const {
  std::vector<ShardMetrics> out;
  for (const auto& w : workers_) out.push_back(w->metrics());
  return out;
}

RetentionMetrics MailboxNode::retention_metrics() const {
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
