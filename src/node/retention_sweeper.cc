#include "node/retention_sweeper.h"
#include "core/thread_name.h"

#include <spdlog/sinks/null_sink.h>

#include <algorithm>

namespace qim {

namespace {

// The store lists at most this many users per call (MailboxStore::list_retention_users).
constexpr uint32_t kListLimit = 1000;

}  // namespace

RetentionSweeper::RetentionSweeper(MailboxStore& store, std::vector<ShardId> shards,
                                   std::shared_ptr<const Clock> clock, RetentionSweepOptions options)
    : store_(store), shards_(std::move(shards)), clock_(std::move(clock)), options_(std::move(options)) {
  if (!clock_) clock_ = std::make_shared<SystemClock>();
  if (options_.batch == 0) options_.batch = 1;
  if (!options_.logger) {
    options_.logger =
        std::make_shared<spdlog::logger>("retention", std::make_shared<spdlog::sinks::null_sink_mt>());
  }
}

RetentionSweeper::~RetentionSweeper() {
  stop();
}

bool RetentionSweeper::stopping() const {
  std::lock_guard lock(mu_);
  return stop_;
}

int64_t RetentionSweeper::next_due_ms() const {
  std::lock_guard lock(mu_);
  return next_due_ms_.value_or(clock_->now_ms());
}

bool RetentionSweeper::tick() {
  {
    std::lock_guard lock(mu_);
    if (next_due_ms_ && clock_->now_ms() < *next_due_ms_) return false;
  }
  run_round();
  std::lock_guard lock(mu_);
  next_due_ms_ = clock_->now_ms() + options_.interval.count();
  return true;
}

void RetentionSweeper::set_shards(std::vector<ShardId> shards) {
  std::lock_guard lock(mu_);
  next_shards_ = std::move(shards);
}

void RetentionSweeper::run_round() {
  {
    std::lock_guard lock(mu_);
    if (next_shards_) {
      const std::optional<ShardId> at =
          shard_index_ < shards_.size() ? std::optional(shards_[shard_index_]) : std::nullopt;
      shards_ = std::move(*next_shards_);
      next_shards_.reset();
      const auto same = at ? std::find(shards_.begin(), shards_.end(), *at) : shards_.end();
      if (same == shards_.end()) {
        shard_index_ = 0;
        cursor_.clear();
      } else {
        shard_index_ = static_cast<size_t>(same - shards_.begin());
      }
    }
  }
  uint32_t budget = options_.batch;
  uint64_t swept = 0, buckets = 0, errors = 0, passes = 0;
  std::optional<Error> first_error;
  auto failed = [&](const Error& e) {
    ++errors;
    if (!first_error) first_error = e;
  };
  // A round ends where a pass ends, and visits each shard at most once: it never sweeps a user twice.
  size_t shards_done = 0;
  bool interrupted = false;
  while (budget > 0 && shards_done < shards_.size() && !shards_.empty()) {
    const ShardId shard = shards_[shard_index_];
    const uint32_t ask = std::min(budget, kListLimit);
    auto listed = store_.list_retention_users(shard, cursor_, ask);
    if (!listed.ok()) {
      failed(listed.error());  // the same place is listed again next round
      break;
    }
    for (const UserId& user : *listed) {
      if (stopping()) {
        interrupted = true;
        break;
      }
      auto outcome = store_.sweep_retention(user);
      cursor_ = user.str();
      --budget;
      if (outcome.ok()) {
        ++swept;
        buckets += outcome->buckets_expired;
      } else {
        failed(outcome.error());  // e.g. ProofMissing: the user stays as it is; tried again next pass
      }
    }
    if (interrupted) break;
    if (listed->size() < ask) {  // the shard's listing is complete: on to the next shard
      cursor_.clear();
      shard_index_ = (shard_index_ + 1) % shards_.size();
      ++shards_done;
      if (shard_index_ == 0) {
        ++passes;
        break;  // a pass is complete: the next one starts with the next round
      }
    }
  }
  const int64_t now = clock_->now_ms();
  {
    std::lock_guard lock(mu_);
    metrics_.rounds++;
    metrics_.users_swept += swept;
    metrics_.buckets_expired += buckets;
    metrics_.errors += errors;
    metrics_.passes += passes;
    metrics_.last_round_ms = now;
    metrics_.last_round_users = swept;
  }
  const std::string resume =
      shards_.empty() ? std::string("no shard")
                      : "shard " + std::to_string(shards_[shard_index_].value) +
                            (cursor_.empty() ? std::string(" from its first user") : " after " + cursor_);
  if (errors > 0) {
    options_.logger->warn("retention round: {} users swept, {} buckets expired, {} errors (first: {}); {}{}",
                          swept, buckets, errors, first_error->to_string(), passes ? "pass complete; " : "",
                          "next round resumes at " + resume);
  } else {
    options_.logger->info("retention round: {} users swept, {} buckets expired; {}next round resumes at {}",
                          swept, buckets, passes ? "pass complete; " : "", resume);
  }
}

void RetentionSweeper::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    set_thread_name("retention");
    while (!stopping()) {
      tick();
      // Sleep until the next round is due on the store clock (it runs at wall-clock speed, possibly
      // offset), at most one interval, woken early by stop().
      const int64_t wait_ms =
          std::clamp<int64_t>(next_due_ms() - clock_->now_ms(), 1, options_.interval.count());
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(wait_ms), [this] { return stop_; });
    }
  });
}

void RetentionSweeper::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

RetentionMetrics RetentionSweeper::metrics() const {
  std::lock_guard lock(mu_);
  return metrics_;
}

}  // namespace qim
