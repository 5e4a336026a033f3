#pragma once
// The in-process fan-in of delivery notifications: every shard worker reports here, and one delivery thread
// hands the batches, in the order they arrived, to the downstream notifiers (the gateway's, in `qim up`).
// A worker therefore never waits on a slow gateway: past `max_queued_entries` a batch is dropped and
// counted instead, which is safe because pushes are best effort (a client that misses one SYNCs).

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
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

  void entries_visible(ShardId shard, MailboxSeq frontier, std::span<const MailboxEntry> entries) override;
  // Returns once everything queued before the call has been handed downstream.
  void flush();

  uint64_t delivered_entries() const;
  uint64_t dropped_entries() const;

 private:
  struct Batch {
    ShardId shard;
    MailboxSeq frontier;
    std::vector<MailboxEntry> entries;
  };
  void run();

  std::vector<DeliveryNotifier*> downstream_;
  size_t max_queued_entries_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Batch> queue_;
  size_t queued_entries_ = 0;
  bool busy_ = false;  // the thread is handing a batch downstream
  bool stopping_ = false;
  uint64_t delivered_ = 0;
  uint64_t dropped_ = 0;
  std::thread thread_;
};

}  // namespace qim
