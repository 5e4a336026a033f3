#include "delivery/fan_in_notifier.h"

#include <algorithm>
#include <iterator>

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

std::vector<FanInNotifier::Item> FanInNotifier::coalesce(std::deque<Item> items) {
  std::vector<Item> out;
  std::unordered_map<uint32_t, size_t> last_of_shard;  // index in `out` of each shard's last report
  for (Item& item : items) {
    auto it = last_of_shard.find(item.shard.value);
    if (it != last_of_shard.end()) {
      Item& last = out[it->second];
      // A chain continues (last.to == item.from) and neither is an empty-range break, which must reach the
      // downstream as its own report.
      const bool chained = last.to == item.from && last.from < last.to && item.from < item.to;
      if (chained && last.unknown == item.unknown) {
        last.to = item.to;
        last.entries.insert(last.entries.end(), std::make_move_iterator(item.entries.begin()),
                            std::make_move_iterator(item.entries.end()));
        continue;
      }
    }
    last_of_shard[item.shard.value] = out.size();
    out.push_back(std::move(item));
  }
  return out;
}

void FanInNotifier::run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything handed over
    // Everything queued goes at once: under load a downstream round trip (the routed publisher's route
    // lookup and PUBLISH) then serves many frontier moves instead of one.
    std::deque<Item> taken;
    taken.swap(queue_);
    popped_ += taken.size();
    for (const Item& item : taken) {
      if (!item.unknown) queued_entries_ -= cost_of(item.entries.size());
    }
    busy_ = true;
    lock.unlock();
    uint64_t delivered = 0, unknown = 0;
    for (const Item& item : coalesce(std::move(taken))) {
      for (DeliveryNotifier* d : downstream_) {
        if (item.unknown) {
          d->range_unknown(item.shard, item.from, item.to);
        } else {
          d->entries_visible(item.shard, item.from, item.to, item.entries);
        }
      }
      if (item.unknown) {
        unknown++;
      } else {
        delivered += item.entries.size();
      }
    }
    lock.lock();
    busy_ = false;
    delivered_ += delivered;
    unknown_delivered_ += unknown;
    cv_.notify_all();
  }
}

}  // namespace qim
