#pragma once
// The in-process fan-in of delivery notifications: every shard worker reports here, and one delivery thread
// hands the reports to the downstream notifiers (the gateway's, in `qim up`; the routed publisher's on a
// MailboxNode). A worker therefore never waits on a slow gateway. The thread takes everything queued at
// once and hands each shard's reports on in the order they arrived, consecutive reports of a shard that
// chain (one's `to` is the next one's `from`) merged into one: a slow downstream then serves many frontier
// moves per call instead of falling behind one call per move. Shards are independent chains, so their
// reports may interleave differently from their arrival. Past `max_queued_entries` a report's entries are
// dropped, but never silently: the dropped ranges of a shard collapse into one "range unknown" report at
// the place in that shard's chain where they belong, so the downstream still sees every move of every
// shard's frontier, in order, and knows which ones it cannot push (its clients SYNC).
//
// Memory stays bounded: queued entries are at most `max_queued_entries` (a report without entries counts
// as one) besides those being handed on, and a shard has at most one collapsed marker behind each of its
// queued reports.

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "delivery/notifier.h"

namespace qim {

class FanInNotifier final : public DeliveryNotifier {
 public:
  // Starts the delivery thread. The downstream notifiers must outlive this object.
  explicit FanInNotifier(std::vector<DeliveryNotifier*> downstream, size_t max_queued_entries = 100'000);
  // Delivers what is queued, then stops.
  ~FanInNotifier() override;
  FanInNotifier(const FanInNotifier&) = delete;
  FanInNotifier& operator=(const FanInNotifier&) = delete;

  // Thread-safe; never blocks on the downstream.
  void entries_visible(ShardId shard, MailboxSeq from, MailboxSeq to,
                       std::span<const MailboxEntry> entries) override;
  void range_unknown(ShardId shard, MailboxSeq from, MailboxSeq to) override;
  // Returns once everything queued before the call has been handed downstream.
  void flush();

  uint64_t delivered_entries() const;
  uint64_t dropped_entries() const;           // entries not handed on (their ranges went on as unknown)
  uint64_t unknown_ranges_delivered() const;  // "range unknown" reports handed downstream

 private:
  struct Item {
    ShardId shard;
    MailboxSeq from, to;
    bool unknown = false;
    std::vector<MailboxEntry> entries;
  };
  void push_locked(Item item);
  // Queues a "range unknown" marker for (from, to], or extends the shard's trailing marker. Requires mu_.
  void mark_unknown_locked(ShardId shard, MailboxSeq from, MailboxSeq to);
  void run();
  // The reports of `items` (in arrival order) with each shard's chained neighbours merged.
  static std::vector<Item> coalesce(std::deque<Item> items);

  std::vector<DeliveryNotifier*> downstream_;
  size_t max_queued_entries_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  uint64_t popped_ = 0;  // items taken off the front so far: item number n sits at queue_[n - popped_]
  // Per shard, the number of its last queued item (to extend a trailing "range unknown" marker).
  std::unordered_map<uint32_t, uint64_t> last_item_;
  size_t queued_entries_ = 0;
  bool busy_ = false;  // the thread is handing an item downstream
  bool stopping_ = false;
  uint64_t delivered_ = 0;
  uint64_t dropped_ = 0;
  uint64_t unknown_delivered_ = 0;
  std::thread thread_;
};

}  // namespace qim
