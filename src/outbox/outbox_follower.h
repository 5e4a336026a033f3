#pragma once
// One Outbox follower: the per-partition reading loop that the Outbox's side consumers (the push role,
// push/push_consumer.h; the event webhook, webhooks/webhook_consumer.h) share. It owns the threads, the
// positions and their commits; what a record means is the consumer's (a Handler per partition).
//
// Per partition, on a thread of its own: read from the group's committed position (or, for a group with
// none, the Outbox's start, or its end with start_at_end, committed at once), at most batch_max records
// at a time; with `follow` set, never past that group's committed position (fanout's: each record is then
// decided), asked again only once the partition caught up with it. Each record is handed to the
// partition's Handler, once it returns kDone the position moves past it; an error is logged and the same
// record is handed again after a pause (a store's or log's error: ask again); kUnfinished (the handler saw
// stopping()) leaves the position before the record, so it is handed again after a restart.
// The position is committed when it moved and commit_interval passed since the last commit (0: each
// turn), before each wait, when a handler asks (Partition::commit) and, forced, when stopping, after the
// handler's finish(). A commit that fails is logged and retried at the next turn (the position stays
// behind: a restart hands a few records again).
//
// Thread safety: start() and stop() from one owner thread; positions() from any thread once start()
// returned. A Handler is made on its partition's thread and called only there; Partition's methods are for
// that thread alone, except stopping(), which any thread may call.

#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "log/log.h"

namespace qim {

struct OutboxFollowerOptions {
  std::string name;                                 // the log messages' prefix ("push", "webhooks")
  std::string group;                                // the follower's consumer group (required)
  std::vector<uint32_t> partitions;                 // empty: every partition
  size_t batch_max = 64;                            // Outbox records read at a time
  std::chrono::milliseconds commit_interval{1000};  // 0: at each turn
  std::chrono::milliseconds poll_wait{200};         // the longest wait for a record
  bool start_at_end = false;           // a group with no position starts at the Outbox's end (and commits it)
  std::string follow;                  // a consumer group to stay behind (fanout's); empty: none
  std::shared_ptr<const Clock> clock;  // the commit interval's clock; system clock if null
  // How a partition pauses (tests: a fake that advances a ManualClock). Default: a wait that stop() cuts.
  std::function<void(std::chrono::milliseconds)> sleep;
  std::shared_ptr<spdlog::logger> logger;  // required
};

// A follower's options from a consumer's options of the same field names (group, partitions, batch_max,
// commit_interval, poll_wait, start_at_end, follow, clock, logger, and sleep where it has one).
template <class ConsumerOptions>
OutboxFollowerOptions outbox_follower_options(std::string name, const ConsumerOptions& o) {
  OutboxFollowerOptions f;
  f.name = std::move(name);
  f.group = o.group;
  f.partitions = o.partitions;
  f.batch_max = o.batch_max;
  f.commit_interval = o.commit_interval;
  f.poll_wait = o.poll_wait;
  f.start_at_end = o.start_at_end;
  f.follow = o.follow;
  f.clock = o.clock;
  if constexpr (requires { o.sleep; }) f.sleep = o.sleep;
  f.logger = o.logger;
  return f;
}

struct OutboxFollowerPosition {
  uint32_t partition = 0;
  uint64_t next = 0;         // the first offset not yet done
  int64_t head_time_ms = 0;  // the append time of the record in hand; 0 between batches
};

class OutboxFollower {
 public:
  class Partition;
  enum class Taken { kDone, kUnfinished };

  // A consumer's side of one partition.
  class Handler {
   public:
    virtual ~Handler() = default;
    // At the start of each turn, before the commit and the read. Returns how long this turn may wait
    // for records (the follower caps it at poll_wait).
    virtual std::chrono::milliseconds turn() { return std::chrono::milliseconds::max(); }
    // One record, in offset order. kDone: the position moves past it; kUnfinished: stopping, it is not
    // done. An error: logged, handed again after a pause.
    virtual Result<Taken> take(const LogRecord& rec) = 0;
    // When stopping, before the forced commit.
    virtual void finish() {}
  };
  // Called on the partition's thread when it starts.
  using HandlerFactory = std::function<std::unique_ptr<Handler>(Partition&)>;

  // What a Handler may ask of its partition (only from the partition's thread, but stopping()).
  class Partition {
   public:
    uint32_t partition() const { return partition_; }
    bool stopping() const { return follower_.stopping_.load(); }
    // Commits the position if it moved, and if `force` or commit_interval passed since the last. The
    // log's error (logged; the next commit retries).
    Status commit(bool force);
    // Waits `d` (options.sleep if set); stop() cuts the default wait short.
    void pause(std::chrono::milliseconds d) { follower_.pause(d); }

   private:
    friend class OutboxFollower;
    Partition(OutboxFollower& follower, uint32_t partition) : follower_(follower), partition_(partition) {}
    OutboxFollower& follower_;
    uint32_t partition_;
    std::atomic<uint64_t> next_{0};
    std::atomic<int64_t> head_time_ms_{0};
    uint64_t committed_ = 0;      // its thread's alone
    int64_t last_commit_ms_ = 0;  // its thread's alone
    std::thread thread_;
  };

  // `outbox` must outlive the follower. Nothing starts before start().
  OutboxFollower(Log& outbox, HandlerFactory make_handler, OutboxFollowerOptions options);
  ~OutboxFollower();  // stop()
  OutboxFollower(const OutboxFollower&) = delete;
  OutboxFollower& operator=(const OutboxFollower&) = delete;

  // Reads the committed positions and starts one thread per partition. InvalidArgument for an unknown
  // partition; the log's error if a position cannot be read or (start_at_end) committed. A second call
  // does nothing.
  Status start();
  // Stops each partition after the record in hand, calls its handler's finish() and commits. Idempotent.
  void stop();

  // Each started partition's position, in start order; empty before start().
  std::vector<OutboxFollowerPosition> positions() const;

 private:
  void run(Partition& p);
  void pause(std::chrono::milliseconds d);

  Log& outbox_;
  HandlerFactory make_handler_;
  OutboxFollowerOptions options_;
  std::shared_ptr<const Clock> clock_;
  std::vector<std::unique_ptr<Partition>> partitions_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> stopping_{false};
  bool started_ = false;
};

}  // namespace qim
