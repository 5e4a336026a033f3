#include "delivery/fan_in_notifier.h"

#include <algorithm>

#include "core/thread_name.h"

namespace qim {

namespace {

// What a report costs against the bound: its entries, and at least one (reports without entries too).
size_t cost_of(size_t entries) {
  return std::max<size_t>(1, entries);
}

}  // namespace

FanInNotifier::FanInNotifier(std::vector<DeliveryNotifier*> downstream, size_t max_queued_entries)
    : downstream_(std::move(downstream)), max_queued_entries_(max_queued_entries) {
  thread_ = std::thread([this] {
    set_thread_name("fan-in");
    run();
  });
}

FanInNotifier::~FanInNotifier() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void FanInNotifier::push_locked(Item item) {
  last_item_[item.shard.value] = popped_ + queue_.size();
  if (!item.unknown) queued_entries_ += cost_of(item.entries.size());
  queue_.push_back(std::move(item));
  cv_.notify_all();
}

void FanInNotifier::entries_visible(ShardId shard, MailboxSeq from, MailboxSeq to,
                                    std::span<const MailboxEntry> entries) {
  std::lock_guard lock(mu_);
  if (queued_entries_ + cost_of(entries.size()) > max_queued_entries_) {
    dropped_ += entries.size();
    mark_unknown_locked(shard, from, to);
    return;
  }
  push_locked(Item{shard, from, to, false, std::vector<MailboxEntry>(entries.begin(), entries.end())});
}

void FanInNotifier::range_unknown(ShardId shard, MailboxSeq from, MailboxSeq to) {
  std::lock_guard lock(mu_);
  mark_unknown_locked(shard, from, to);
}

void FanInNotifier::mark_unknown_locked(ShardId shard, MailboxSeq from, MailboxSeq to) {
  // Collapse into the shard's trailing marker if its last queued item is one (the ranges of one shard
  // arrive chained, so the marker simply extends), else queue a new marker.
  if (auto it = last_item_.find(shard.value); it != last_item_.end() && it->second >= popped_) {
    Item& last = queue_[it->second - popped_];
    if (last.unknown && last.to == from) {
      last.to = to;
      return;
    }
  }
  push_locked(Item{shard, from, to, true, {}});
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

uint64_t FanInNotifier::unknown_ranges_delivered() const {
  std::lock_guard lock(mu_);
  return unknown_delivered_;
}

void FanInNotifier::run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything handed over
    Item item = std::move(queue_.front());
    queue_.pop_front();
    ++popped_;
    if (!item.unknown) queued_entries_ -= cost_of(item.entries.size());
    busy_ = true;
    lock.unlock();
    for (DeliveryNotifier* d : downstream_) {
      if (item.unknown) {
        d->range_unknown(item.shard, item.from, item.to);
      } else {
        d->entries_visible(item.shard, item.from, item.to, item.entries);
      }
    }
    lock.lock();
    busy_ = false;
    if (item.unknown) {
      unknown_delivered_++;
    } else {
      delivered_ += item.entries.size();
    }
    cv_.notify_all();
  }
}

}  // namespace qim
