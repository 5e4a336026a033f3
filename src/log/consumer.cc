#include "log/consumer.h"

#include <spdlog/sinks/null_sink.h>

#include <algorithm>

#include "core/thread_name.h"

namespace qim {

LogConsumer::LogConsumer(Log& log, ConsumerOptions options, BatchHandler handler)
    : log_(log), options_(std::move(options)), handler_(std::move(handler)) {
  if (!options_.logger) {
    options_.logger =
        std::make_shared<spdlog::logger>(options_.group, std::make_shared<spdlog::sinks::null_sink_mt>());
  }
  if (options_.partitions.empty()) {
    for (uint32_t p = 0; p < log_.partition_count(); ++p) options_.partitions.push_back(p);
  }
}

LogConsumer::~LogConsumer() {
  stop();
}

Status LogConsumer::start() {
  if (started_) return Error(Errc::kInvariant, "consumer " + options_.group + " already started");
  std::vector<std::unique_ptr<PartitionState>> states;
  for (uint32_t p : options_.partitions) {
    if (p >= log_.partition_count()) {
      return Error(Errc::kInvalidArgument, "consumer " + options_.group + ": the " + log_.name() +
                                               " log has no partition " + std::to_string(p));
    }
    QIM_ASSIGN_OR_RETURN(auto committed, log_.committed(options_.group, p));
    auto s = std::make_unique<PartitionState>();
    s->partition = p;
    s->next = committed.value_or(Offset{0}).value;
    states.push_back(std::move(s));
  }
  states_ = std::move(states);
  started_ = true;
  for (auto& s : states_) {
    s->thread = std::thread([this, raw = s.get()] {
      set_thread_name(options_.group + "-p" + std::to_string(raw->partition));
      run(*raw);
    });
  }
  return {};
}

void LogConsumer::stop() {
  stopping_ = true;
  {
    std::lock_guard lock(mu_);
    cv_.notify_all();
  }
  for (auto& s : states_) {
    if (s->thread.joinable()) s->thread.join();
  }
}

bool LogConsumer::pause(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, d, [&] { return stopping_.load(); });
  return !stopping_;
}

Status LogConsumer::seek(uint32_t partition, Offset next) {
  std::lock_guard lock(mu_);
  for (auto& s : states_) {
    if (s->partition == partition) {
      s->seek_to = next.value;
      return {};
    }
  }
  return Error(Errc::kInvalidArgument,
               "consumer " + options_.group + " does not read partition " + std::to_string(partition));
}

Status LogConsumer::drain(std::chrono::milliseconds limit, const std::function<void(uint64_t)>& progress) {
  {
    std::lock_guard lock(mu_);
    for (auto& s : states_) {
      auto end = log_.end_offset(s->partition);
      s->drain_until = end.ok() ? end->value : s->next.load();
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  auto next_progress = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (true) {
    uint64_t remaining = 0;
    bool all_done = true;
    {
      std::lock_guard lock(mu_);
      for (auto& s : states_) {
        all_done = all_done && s->done;
        remaining += *s->drain_until - std::min(*s->drain_until, s->next.load());
      }
    }
    if (all_done) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      stop();
      return Error(Errc::kTimeout, "consumer " + options_.group + " did not drain within " +
                                       std::to_string(limit.count()) + " ms; " + std::to_string(remaining) +
                                       " records left");
    }
    if (progress && remaining > 0 && std::chrono::steady_clock::now() >= next_progress) {
      progress(remaining);
      next_progress = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    }
    std::unique_lock lock(mu_);
    cv_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(1)));
  }
  stop();
  return {};
}

std::vector<ConsumerPosition> LogConsumer::positions() const {
  std::vector<ConsumerPosition> out;
  for (const auto& s : states_) {
    ConsumerPosition p{s->partition, Offset{s->next.load()}, 0};
    if (auto end = log_.end_offset(s->partition); end.ok())
      p.lag = end->value - std::min(end->value, p.next.value);
    out.push_back(p);
  }
  return out;
}

void LogConsumer::back_off(std::chrono::milliseconds& backoff, const PartitionState& s, std::string_view what,
                           const Error& error) {
  options_.logger->warn("{}: partition {}: {} at offset {} failed, retrying in {} ms: {}", options_.group,
                        s.partition, what, s.next.load(), backoff.count(), error.to_string());
  pause(backoff);
  backoff = std::min(backoff * 2, options_.retry_max);
}

Status LogConsumer::commit(const PartitionState& s) {
  if (options_.before_commit) QIM_RETURN_IF_ERROR(options_.before_commit(s.partition));
  return log_.commit(options_.group, s.partition, Offset{s.next});
}

void LogConsumer::run(PartitionState& s) {
  using Clock = std::chrono::steady_clock;
  auto& logger = *options_.logger;
  auto backoff = options_.retry_min;
  bool committed_current = true;
  bool commit_now = false;  // a seek is committed at once, so a stopped instance shows it
  auto last_commit = Clock::now();
  while (!stopping_) {
    std::optional<uint64_t> until;
    {
      std::lock_guard lock(mu_);
      if (s.seek_to) {
        logger.info("{}: partition {} moves from offset {} to {}", options_.group, s.partition, s.next.load(),
                    *s.seek_to);
        s.next = *s.seek_to;
        s.seek_to.reset();
        committed_current = false;
        commit_now = true;
      }
      until = s.drain_until;
      if (until && s.next >= *until && committed_current) {
        s.done = true;
        cv_.notify_all();
        return;
      }
    }
    const auto commit_due = last_commit + options_.commit_interval;
    if (!committed_current && (commit_now || until || Clock::now() >= commit_due)) {
      Status c = commit(s);
      if (!c.ok()) {
        back_off(backoff, s, "commit", c.error());
        continue;
      }
      committed_current = true;
      commit_now = false;
      last_commit = Clock::now();
      continue;
    }
    size_t max = options_.batch_max;
    if (until) max = std::min<uint64_t>(max, *until - s.next);
    auto wait = options_.poll_wait;
    if (until) wait = std::chrono::milliseconds(0);
    if (!committed_current) {
      wait = std::min(wait, std::chrono::duration_cast<std::chrono::milliseconds>(commit_due - Clock::now()) +
                                std::chrono::milliseconds(1));
    }
    auto batch = log_.read(s.partition, Offset{s.next}, max, wait);
    if (!batch.ok()) {
      back_off(backoff, s, "read", batch.error());
      continue;
    }
    if (batch->empty()) continue;
    Status handled = handler_(s.partition, *batch);
    if (!handled.ok()) {
      back_off(backoff, s, "batch", handled.error());
      continue;
    }
    backoff = options_.retry_min;
    {
      std::lock_guard lock(mu_);
      if (s.seek_to) continue;  // a seek arrived meanwhile: it wins over this batch's position
      s.next = batch->back().offset.value + 1;
    }
    committed_current = false;
  }
  if (!committed_current) {
    // Stopping: keep the progress made so a restart does not redo it (it would be harmless, only slower).
    if (Status c = commit(s); !c.ok()) {
      logger.warn("{}: partition {}: final commit failed: {}", options_.group, s.partition,
                  c.error().to_string());
    }
  }
}

}  // namespace qim
