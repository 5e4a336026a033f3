#include "delivery/fan_in_notifier.h"

namespace qim {

FanInNotifier::FanInNotifier(std::vector<DeliveryNotifier*> downstream, size_t max_queued_entries)
    : downstream_(std::move(downstream)), max_queued_entries_(max_queued_entries) {
  thread_ = std::thread([this] { run(); });
}

FanInNotifier::~FanInNotifier() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void FanInNotifier::entries_visible(ShardId shard, MailboxSeq frontier,
                                    std::span<const MailboxEntry> entries) {
  if (entries.empty()) return;
  std::lock_guard lock(mu_);
  if (queued_entries_ + entries.size() > max_queued_entries_) {
    dropped_ += entries.size();
    return;
  }
  queue_.push_back(Batch{shard, frontier, std::vector<MailboxEntry>(entries.begin(), entries.end())});
  queued_entries_ += entries.size();
  cv_.notify_all();
}

void FanInNotifier::flush() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

uint64_t FanInNotifier::delivered_entries() const {
  std::lock_guard lock(mu_);
  return delivered_;
}

uint64_t FanInNotifier::dropped_entries() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

void FanInNotifier::run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything handed over
    Batch batch = std::move(queue_.front());
    queue_.pop_front();
    queued_entries_ -= batch.entries.size();
    busy_ = true;
    lock.unlock();
    for (DeliveryNotifier* d : downstream_) d->entries_visible(batch.shard, batch.frontier, batch.entries);
    lock.lock();
    busy_ = false;
    delivered_ += batch.entries.size();
    cv_.notify_all();
  }
}

}  // namespace qim
