#include "outbox/outbox_follower.h"

#include <fmt/format.h>

#include <algorithm>

namespace qim {

namespace {

constexpr std::chrono::milliseconds kErrorPause{1000};  // a log's or store's error

}  // namespace

OutboxFollower::OutboxFollower(Log& outbox, HandlerFactory make_handler, OutboxFollowerOptions options)
    : outbox_(outbox),
      make_handler_(std::move(make_handler)),
      options_(std::move(options)),
      clock_(options_.clock ? options_.clock : std::make_shared<SystemClock>()) {}

OutboxFollower::~OutboxFollower() {
  stop();
}

Status OutboxFollower::start() {
  if (started_) return {};
  std::vector<uint32_t> parts = options_.partitions;
  if (parts.empty()) {
    for (uint32_t p = 0; p < outbox_.partition_count(); ++p) parts.push_back(p);
  }
  std::vector<std::unique_ptr<Partition>> states;
  for (uint32_t p : parts) {
    if (p >= outbox_.partition_count())
      return Error(Errc::kInvalidArgument, fmt::format("{}: no outbox partition {}", options_.name, p));
    auto s = std::unique_ptr<Partition>(new Partition(*this, p));
    QIM_ASSIGN_OR_RETURN(auto committed, outbox_.committed(options_.group, p));
    QIM_ASSIGN_OR_RETURN(Offset start, outbox_.start_offset(p));
    uint64_t next = 0;
    if (committed) {
      next = committed->value;
      if (next < start.value) {
        options_.logger->warn(
            "{}: outbox partition {}: records {}..{} were deleted by the outbox retention before they were "
            "read; starting at {}",
            options_.name, p, next, start.value - 1, start.value);
        next = start.value;
      }
    } else if (options_.start_at_end) {
      QIM_ASSIGN_OR_RETURN(Offset end, outbox_.end_offset(p));
      next = end.value;
      QIM_RETURN_IF_ERROR(outbox_.commit(options_.group, p, end));
    } else {
      next = start.value;
    }
    s->next_ = next;
    s->committed_ = committed ? committed->value : next;
    states.push_back(std::move(s));
  }
  partitions_ = std::move(states);
  stopping_ = false;
  started_ = true;
  for (auto& p : partitions_) p->thread_ = std::thread([this, s = p.get()] { run(*s); });
  return {};
}

void OutboxFollower::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& p : partitions_) {
    if (p->thread_.joinable()) p->thread_.join();
  }
}

std::vector<OutboxFollowerPosition> OutboxFollower::positions() const {
  std::vector<OutboxFollowerPosition> out;
  out.reserve(partitions_.size());
  for (const auto& p : partitions_)
    out.push_back(OutboxFollowerPosition{p->partition_, p->next_.load(), p->head_time_ms_.load()});
  return out;
}

void OutboxFollower::pause(std::chrono::milliseconds d) {
  if (options_.sleep) {
    options_.sleep(d);
    return;
  }
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, d, [this] { return stopping_.load(); });
}

Status OutboxFollower::Partition::commit(bool force) {
  const uint64_t next = next_.load();
  if (next <= committed_) return {};
  const int64_t now = follower_.clock_->now_ms();
  if (!force && now - last_commit_ms_ < follower_.options_.commit_interval.count()) return {};
  last_commit_ms_ = now;
  Status s = follower_.outbox_.commit(follower_.options_.group, partition_, Offset{next});
  if (s.ok()) {
    committed_ = next;
  } else {
    // Not fatal: the position stays behind, so a restart hands a little more again; the next commit retries.
    follower_.options_.logger->warn("{}: cannot commit outbox partition {} at {}: {}",
                                    follower_.options_.name, partition_, next, s.error().to_string());
  }
  return s;
}

void OutboxFollower::run(Partition& p) {
  std::unique_ptr<Handler> handler = make_handler_(p);
  const auto& name = options_.name;
  // The followed group's committed position, asked again only once this partition caught up with it (on
  // Kafka each ask is a round trip to the group coordinator).
  uint64_t limit = options_.follow.empty() ? UINT64_MAX : 0;
  while (!stopping_) {
    const auto wait = std::min(options_.poll_wait, handler->turn());
    (void)p.commit(false);
    const uint64_t next = p.next_.load();
    if (next >= limit) {
      auto decided = outbox_.committed(options_.follow, p.partition_);
      if (!decided.ok()) {
        options_.logger->warn("{}: cannot read {}'s position on partition {}: {}", name, options_.follow,
                              p.partition_, decided.error().to_string());
        pause(kErrorPause);
        continue;
      }
      limit = decided->value_or(Offset{0}).value;
      if (next >= limit) {
        pause(wait);
        continue;
      }
    }
    auto batch =
        outbox_.read(p.partition_, Offset{next}, std::min<uint64_t>(options_.batch_max, limit - next), wait);
    if (!batch.ok()) {
      options_.logger->warn("{}: cannot read outbox partition {} at {}: {}", name, p.partition_, next,
                            batch.error().to_string());
      pause(kErrorPause);
      continue;
    }
    for (const LogRecord& rec : *batch) {
      if (rec.offset.value >= limit || stopping_) break;
      p.head_time_ms_ = rec.timestamp_ms;
      Result<Taken> taken = handler->take(rec);
      while (!taken.ok() && !stopping_) {
        options_.logger->warn("{}: outbox record {}:{}: {} (trying again)", name, p.partition_,
                              rec.offset.value, taken.error().to_string());
        pause(kErrorPause);
        taken = handler->take(rec);
      }
      // Not done (stopping): the record is handed again after a restart.
      if (!taken.ok() || *taken == Taken::kUnfinished) break;
      p.next_ = rec.offset.value + 1;
    }
    p.head_time_ms_ = 0;
  }
  handler->finish();
  (void)p.commit(true);
}

}  // namespace qim
