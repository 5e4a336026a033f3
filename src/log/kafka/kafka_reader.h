#pragma once
// Reads of a topic from any position. A read needs a consumer positioned at its `from`; a consumer
// handle ("lane") fetches each partition of the topic from one position, so the pool keeps a lane per
// concurrent reader of a partition: a reader that continues where the previous read of a lane ended finds
// that lane's partition already fetching there (the sequential case: no seek, records prefetched); a read
// elsewhere restarts one idle lane's partition at its offset. Positions live in the caller (Log::read's
// `from`), never in Kafka: consumer groups are only for commit()/committed() (kafka_offsets.h).
//
// A read that continues a lane returns what the lane prefetched, even if retention deleted it since
// (the records are intact and contiguous); every read that has to fetch below the log start, and every
// repositioning, gets ExpiredCursor. Records are never skipped.
//
// Thread safety: read() may be called concurrently from any threads, for the same or different
// partitions (each concurrent read of one partition uses its own lane). close() wakes waiting reads.

#include <librdkafka/rdkafka.h>
#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "log/kafka/kafka_defaults.h"
#include "log/kafka/kafka_handle.h"
#include "log/log.h"

namespace qim::kafka {

struct ReaderOptions {
  std::vector<std::string> brokers;
  std::string topic;
  uint32_t partitions = 1;
  std::chrono::milliseconds request_timeout{5000};  // watermark queries when a lane is repositioned
  size_t max_message_bytes = 1 << 20;               // the topic's max.message.bytes
  std::chrono::milliseconds idle_stop{10'000};      // see serve_events()
  std::shared_ptr<spdlog::logger> logger;           // must not be null
  // How long the broker may hold a fetch to gather kFetchBatchBytes (fetch.wait.max.ms, fetch.min.bytes);
  // 0: a fetch returns as soon as one record is there. Under load a held fetch carries many records where
  // an immediate one carries a few, at most this much later.
  std::chrono::milliseconds fetch_wait = kDefaultFetchWait;
  static constexpr size_t kFetchBatchBytes = 64 * 1024;
};

// The low and high watermark of a partition (first kept offset, offset of the next record), asking again
// within `timeout` while the handle's metadata is stale (a new topic, a leader change).
Result<std::pair<uint64_t, uint64_t>> watermarks(rd_kafka_t* rk, const std::string& topic, uint32_t partition,
                                                 std::chrono::milliseconds timeout);

class ReaderPool {
 public:
  explicit ReaderPool(ReaderOptions options);
  ~ReaderPool();
  ReaderPool(const ReaderPool&) = delete;
  ReaderPool& operator=(const ReaderPool&) = delete;

  // Up to `max` records of `partition` (checked by the caller) from offset `from`, waiting up to `wait`
  // for the first. ExpiredCursor if `from` (or the next record to fetch) is below the partition's first
  // kept offset (deleted by retention); InvalidArgument if `from` is beyond its end; Transport or Timeout
  // if the cluster cannot be asked. Records known to exist (below the end as last seen) are waited for
  // even with a zero `wait`, up to request_timeout (then Timeout). Empty after `wait`, or at once after
  // close().
  Result<std::vector<LogRecord>> read(uint32_t partition, uint64_t from, size_t max,
                                      std::chrono::milliseconds wait);
  // Serves the lanes' queued events (errors to the logger) and stops fetching partitions no read has used
  // for options.idle_stop (a gateway reads the Outbox once at start: its lane would otherwise keep fetching
  // every record, and every idle fetch costs the broker); the next read there repositions. Call it
  // regularly (KafkaLog does, every 200 ms).
  void serve_events();
  // Partitions stopped by serve_events() for want of reads, since construction.
  uint64_t idle_stops() const { return idle_stops_.load(); }
  // Wakes waiting reads (they return what they have) and makes later reads return empty. Idempotent.
  void close() { closed_ = true; }

 private:
  struct Lane {
    Handle rk;
    Topic rkt;
    struct Part {
      bool started = false;  // fetching from `next`
      bool busy = false;     // a read uses it; guarded by ReaderPool::mu_
      uint64_t next = 0;
      std::chrono::steady_clock::time_point last_read;  // when the last read of it ended
    };
    std::vector<Part> parts;
  };

  // Picks (or creates) a lane whose partition is idle, preferring one already at `from`; marks it busy.
  Result<Lane*> acquire(uint32_t partition, uint64_t from);
  void release(Lane& lane, uint32_t partition);
  Result<std::unique_ptr<Lane>> new_lane();
  // Starts the lane's partition at `from` after checking it against the watermarks; returns the end.
  Result<uint64_t> position(Lane& lane, uint32_t partition, uint64_t from);
  void stop(Lane& lane, uint32_t partition);
  // The error for a fetch that failed with `err` while reading from `at`.
  Error fetch_error(Lane& lane, uint32_t partition, uint64_t at, rd_kafka_resp_err_t err);

  ReaderOptions options_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Lane>> lanes_;  // guarded by mu_ (the vector; a busy part is its reader's)
  std::atomic<bool> closed_{false};
  std::atomic<uint64_t> idle_stops_{0};
};

}  // namespace qim::kafka
