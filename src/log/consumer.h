#pragma once
// A consumer group over partitions of a log, the loop fanout and the archiver share: one thread per
// partition reads a batch from the group's position, hands it to the handler, and commits the position
// (at most once per commit_interval, after `before_commit`) once the handler succeeded (at-least-once: after
// a crash the last batch is seen again, so handlers are idempotent). A failing handler gets the same batch
// again after a growing pause; nothing is skipped here (a handler that wants to skip a poison record does so
// itself and says so).

#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "log/log.h"

namespace qim {

struct ConsumerOptions {
  std::string group;
  std::vector<uint32_t> partitions;  // empty: every partition of the log
  size_t batch_max = 256;
  std::chrono::milliseconds poll_wait{200};
  std::chrono::milliseconds retry_min{20};
  std::chrono::milliseconds retry_max{5000};
  // Positions are committed at most this often per partition (and when stopping): a commit is a durable
  // write (a file, or a record in Kafka's offsets topic), and committing less often only means a crash
  // replays a little more, which at-least-once handles anyway. 1 s, as the MailboxNode's: at 200 ms,
  // fanout and the archiver sent 160 commits a second to Kafka at 200 msg/s, the broker's largest cost.
  std::chrono::milliseconds commit_interval{1000};
  // Called before each commit of a partition's position (so at most once per commit_interval, and at a
  // seek, a drain's end and a stop): a handler whose writes are cheap but not yet durable makes them durable
  // here, once per commit rather than once per batch. An error means "not yet": the position stays where it
  // was committed and the commit is retried after the usual pause. Called from the partition's thread.
  std::function<Status(uint32_t partition)> before_commit;
  std::shared_ptr<spdlog::logger> logger;  // silent if null
};

// Handles one batch of one partition; an error means "give me this batch again".
using BatchHandler = std::function<Status(uint32_t partition, std::span<const LogRecord> batch)>;

struct ConsumerPosition {
  uint32_t partition = 0;
  Offset next;       // the first offset not yet handled
  uint64_t lag = 0;  // records between next and the log's end
};

class LogConsumer {
 public:
  LogConsumer(Log& log, ConsumerOptions options, BatchHandler handler);
  ~LogConsumer();
  LogConsumer(const LogConsumer&) = delete;
  LogConsumer& operator=(const LogConsumer&) = delete;

  // Reads the committed positions (none: the start of the partition) and starts the threads. InvalidArgument
  // for an unknown partition; the log's error if a position cannot be read. Nothing is started on error.
  Status start();
  // Stops after the batch in hand, without waiting for the end of the log. Idempotent.
  void stop();
  // Consumes every partition up to its end as of this call, then stops. Timeout if that did not happen
  // within `limit` (the threads are stopped anyway). `progress` is called at most once a second while
  // records remain.
  Status drain(std::chrono::milliseconds limit, const std::function<void(uint64_t remaining)>& progress = {});
  // Moves a partition's position to `next` (earlier for a replay): the partition's thread starts its next
  // batch there and commits it. InvalidArgument for a partition this consumer does not own.
  Status seek(uint32_t partition, Offset next);
  std::vector<ConsumerPosition> positions() const;
  // The logger of the options (a silent one if none was given).
  spdlog::logger& logger() const { return *options_.logger; }

 private:
  struct PartitionState {
    uint32_t partition = 0;
    std::atomic<uint64_t> next{0};
    std::optional<uint64_t> seek_to;      // guarded by mu_
    std::optional<uint64_t> drain_until;  // guarded by mu_
    bool done = false;                    // guarded by mu_
    std::thread thread;
  };

  void run(PartitionState& state);
  // before_commit, then the log's commit of the partition's position.
  Status commit(const PartitionState& state);
  // Waits up to `d` unless stopping; false if stopping.
  bool pause(std::chrono::milliseconds d);
  // Logs why, waits the current backoff, and doubles it (up to retry_max).
  void back_off(std::chrono::milliseconds& backoff, const PartitionState& s, std::string_view what,
                const Error& error);

  Log& log_;
  ConsumerOptions options_;
  BatchHandler handler_;
  std::vector<std::unique_ptr<PartitionState>> states_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> stopping_{false};
  bool started_ = false;
};

}  // namespace qim
