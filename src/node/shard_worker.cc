#include "node/shard_worker.h"

#include <algorithm>

#include "mailbox/message_codec.h"
#include "node/lease_guard.h"

namespace qim {

ShardWorker::ShardWorker(Log& mailbox_log, MailboxStore& store, DeliveryNotifier* notifier,
                         ShardWorkerOptions options)
    : log_(mailbox_log),
      store_(store),
      notifier_(notifier),
      options_(std::move(options)),
      logger_(*options_.logger),
      backoff_(options_.retry_min) {
  metrics_.shard = options_.shard;
  metrics_.epoch = options_.epoch;
}

Status ShardWorker::init() {
  const uint32_t shard = options_.shard.value;
  page_limit_ = std::max<uint32_t>(1, store_.finish_page_limit());
  QIM_ASSIGN_OR_RETURN(auto watermarks, store_.lane_watermarks(options_.shard, options_.epoch));
  w_ = watermarks[0];
  const uint64_t next = w_.is_zero() ? 0 : w_.offset().value + 1;
  QIM_ASSIGN_OR_RETURN(Offset end, log_.end_offset(shard));
  if (next > end.value) {
    return Error(Errc::kInvariant, "shard " + std::to_string(shard) + ": the store's frontier " +
                                       w_.to_string() + " lies beyond the end of the mailbox log (" +
                                       std::to_string(end.value) +
                                       " records): the log and the store do not belong together");
  }
  next_read_ = next;
  finished_next_ = next;
  committed_next_ = next;
  catch_up_end_ = end.value;
  last_commit_ = std::chrono::steady_clock::now();
  next_progress_ = last_commit_ + std::chrono::seconds(5);
  {
    std::lock_guard lock(mu_);
    metrics_.frontier = w_;
  }
  logger_.info(
      "shard {}: epoch {}, frontier {}, resuming at mailbox-log offset {}, {} records to catch up, "
      "page limit {}",
      shard, options_.epoch.value, w_.to_string(), next, end.value - next, page_limit_);
  return {};
}

void ShardWorker::request_stop() {
  stop_ = true;
  std::lock_guard lock(mu_);
  cv_.notify_all();
}

void ShardWorker::request_abort() {
  skip_final_commit_ = true;
  request_stop();
}

void ShardWorker::request_drain() {
  auto end = log_.end_offset(options_.shard.value);
  std::lock_guard lock(mu_);
  drain_until_ = end.ok() ? end->value : finished_next_.load();
  cv_.notify_all();
}

std::optional<Error> ShardWorker::fatal() const {
  std::lock_guard lock(mu_);
  return fatal_;
}

ShardMetrics ShardWorker::metrics() const {
  ShardMetrics m;
  {
    std::lock_guard lock(mu_);
    m = metrics_;
    if (fatal_) m.stopped = fatal_->to_string();
  }
  if (auto end = log_.end_offset(options_.shard.value); end.ok()) {
    m.lag = end->value - std::min(end->value, finished_next_.load());
  }
  return m;
}

void ShardWorker::set_fatal(const Error& error) {
  if (is_lease_lapsed(error)) {
    logger_.warn("shard {}: stopping: {}", options_.shard.value, error.to_string());
  } else {
    logger_.critical("shard {}: stopping: {}", options_.shard.value, error.to_string());
  }
  std::lock_guard lock(mu_);
  fatal_ = error;
}

bool ShardWorker::pause(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, d, [&] { return stop_.load(); });
  return !stop_;
}

Status ShardWorker::fill(std::chrono::milliseconds wait) {
  if (head_ == queue_.size()) {
    queue_.clear();
    head_ = 0;
  } else if (head_ >= options_.read_batch) {
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
  const size_t queued = queue_.size() - head_;
  if (queued >= options_.read_batch) return {};
  QIM_ASSIGN_OR_RETURN(
      auto records, log_.read(options_.shard.value, Offset{next_read_}, options_.read_batch - queued, wait));
  for (auto& r : records) {
    auto decoded = decode_dispatch_record(r.value);
    queue_.push_back(QueuedRecord{r.offset, std::move(decoded), std::move(r.value)});
    next_read_ = r.offset.value + 1;
  }
  return {};
}

void ShardWorker::maybe_commit(bool force) {
  const uint64_t next = finished_next_;
  if (next == committed_next_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_commit_ < options_.commit_interval) return;
  last_commit_ = now;
  if (Status s = log_.commit(options_.group, options_.shard.value, Offset{next}); !s.ok()) {
    logger_.warn("shard {}: commit of mailbox-log position {} failed: {}", options_.shard.value, next,
                 s.error().to_string());
    return;
  }
  committed_next_ = next;
}

void ShardWorker::run() {
  while (!stop_) {
    {
      std::lock_guard lock(mu_);
      if (drain_until_ && finished_next_ >= *drain_until_) {
        drained_ = true;
        break;
      }
    }
    if (!step()) break;
  }
  if (!skip_final_commit_) maybe_commit(true);
}

bool ShardWorker::step() {
  const uint32_t shard = options_.shard.value;
  Status filled = queue_.size() == head_
                      ? fill(options_.poll_wait)
                      : (queue_.size() - head_ < page_limit_ ? fill(std::chrono::milliseconds(0)) : Status());
  if (!filled.ok()) {
    logger_.warn("shard {}: reading the mailbox log at offset {} failed: {}", shard, next_read_,
                 filled.error().to_string());
    if (queue_.size() == head_) return pause(backoff_);
  }
  if (queue_.size() == head_) {
    maybe_commit(false);
    return true;
  }

  const uint64_t first = queue_[head_].offset.value;
  const bool one_by_one = page_limit_ == 1 || first < catch_up_end_ || first < single_until_;
  const size_t n = one_by_one ? 1 : std::min<size_t>(page_limit_, queue_.size() - head_);
  const std::span<const QueuedRecord> page(queue_.data() + head_, n);
  auto result = materialize_page(store_, *options_.quarantine, options_.shard, options_.epoch, w_, page,
                                 !one_by_one, logger_);
  if (!result.ok()) {
    const Error& e = result.error();
    if (classify(e) == ErrorAction::kFatal) {
      set_fatal(e);
      return false;
    }
    {
      std::lock_guard lock(mu_);
      metrics_.retries++;
    }
    if (classify(e) == ErrorAction::kSkipRecord && n > 1) {
      // Somewhere in the page is a record the store refuses: finish these one by one to find it.
      single_until_ = page.back().offset.value + 1;
      return true;
    }
    logger_.warn("shard {}: {} record(s) at offsets {}..{} failed, retrying in {} ms: {}", shard, n, first,
                 page.back().offset.value, backoff_.count(), e.to_string());
    if (!pause(backoff_)) return false;
    backoff_ = std::min(backoff_ * 2, options_.retry_max);
    recover_after_failure(e);
    return fatal() == std::nullopt;
  }
  backoff_ = options_.retry_min;
  head_ += n;
  finished_next_ = page.back().offset.value + 1;
  const MailboxSeq before = w_;
  w_ = result->frontier;
  {
    std::lock_guard lock(mu_);
    metrics_.frontier = w_;
    metrics_.records += n;
    metrics_.advanced += result->advanced;
    metrics_.repeated += result->repeated;
    metrics_.skipped += result->skipped;
    for (Errc why : result->quarantined) metrics_.quarantined[std::string(errc_name(why))]++;
    if (first < catch_up_end_) {
      metrics_.catch_up += n;
    } else {
      metrics_.pages++;  // with page limit 1 every record is a page of one
      metrics_.paged_records += n;
    }
  }
  // Every move is reported, with or without entries, so the receiver sees the shard's chain unbroken.
  if (notifier_ != nullptr && w_ != before) {
    notifier_->entries_visible(options_.shard, before, w_, result->visible);
  }
  if (first < catch_up_end_ && std::chrono::steady_clock::now() >= next_progress_) {
    next_progress_ = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    logger_.info("shard {}: catching up: at mailbox-log offset {} of {}", shard, finished_next_.load(),
                 catch_up_end_);
  }
  maybe_commit(false);
  return true;
}

void ShardWorker::recover_after_failure(const Error& error) {
  // The failed step may have moved the frontier after all (an uncertain write that landed): take W from the
  // store again and drop what it already covers. What that move made visible is still reported: rebuilt
  // from the dropped records when the store can say which of them advanced, else as a range unknown, so
  // the gateways tell their clients to SYNC instead of leaving a hole behind a later push.
  auto watermarks = store_.lane_watermarks(options_.shard, options_.epoch);
  if (!watermarks.ok()) {
    if (classify(watermarks.error()) == ErrorAction::kFatal) set_fatal(watermarks.error());
    return;
  }
  const MailboxSeq stored = (*watermarks)[0];
  const MailboxSeq before = w_;
  if (stored != w_) {
    logger_.info("shard {}: after {}: frontier reloaded {} -> {}", options_.shard.value,
                 errc_name(error.code()), w_.to_string(), stored.to_string());
    w_ = stored;
  }
  const size_t first = head_;
  while (head_ < queue_.size() && w_.epoch() == options_.epoch && queue_[head_].offset <= w_.offset()) {
    finished_next_ = queue_[head_].offset.value + 1;
    ++head_;
  }
  const uint64_t dropped = head_ - first;
  if (notifier_ != nullptr && w_ != before) {
    const std::span<const QueuedRecord> covered(queue_.data() + first, dropped);
    if (auto visible = rebuild_visible(covered); visible) {
      notifier_->entries_visible(options_.shard, before, w_, *visible);
    } else {
      logger_.warn(
          "shard {}: cannot tell which entries the frontier move {} -> {} made visible; reporting "
          "the range as unknown (clients SYNC)",
          options_.shard.value, before.to_string(), w_.to_string());
      notifier_->range_unknown(options_.shard, before, w_);
    }
  }
  std::lock_guard lock(mu_);
  metrics_.frontier = w_;
  metrics_.records += dropped;
  metrics_.advanced += dropped;
}

std::optional<std::vector<MailboxEntry>> ShardWorker::rebuild_visible(std::span<const QueuedRecord> covered) {
  // The move ends at the last record that advanced: it must be among the covered ones, or the move is not
  // ours to explain.
  if (covered.empty() || w_.epoch() != options_.epoch || covered.back().offset != w_.offset()) {
    return std::nullopt;
  }
  std::vector<MailboxEntry> out;
  for (const QueuedRecord& q : covered) {
    if (!q.record.ok()) continue;  // undecodable: skipped, it has no entries
    // A record's entries sit at compose(epoch, canonical offset): this record made some visible only if it
    // was the dispatch's first observation. Anything the store cannot answer leaves the move unexplained.
    auto progress = store_.dispatch_progress(options_.shard, options_.epoch, q.record->identity.id);
    if (!progress.ok()) return std::nullopt;
    if (progress->canonical_offset != q.offset) continue;  // a repeat: its entries were visible before
    auto seq = compose(options_.epoch, q.offset);
    if (!seq.ok()) return std::nullopt;
    for (const auto& chunk : q.record->chunks) {
      for (const auto& user : chunk) out.push_back(MailboxEntry{user, *seq, q.record->message});
    }
  }
  return out;
}

}  // namespace qim
