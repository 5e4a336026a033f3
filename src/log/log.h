#pragma once
// A partitioned, append-only log: the Outbox (partitioned by conversation) and the mailbox log (one
// partition per shard) are both logs. Shaped after Kafka's semantics so both implementations fit:
// offsets per partition (< 2^48), durable appends, reads from any position, consumer positions committed
// per group separately from the data (at-least-once: a consumer may see a record again after a restart).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/mailbox_seq.h"
#include "core/status.h"

namespace qim {

struct LogRecord {
  uint32_t partition = 0;
  Offset offset;
  int64_t timestamp_ms = 0;  // append time
  std::string key;
  std::string value;
};

// Called once per append, from a log thread, when the record is durable (or failed).
using AppendCallback = std::function<void(Result<Offset>)>;

class Log {
 public:
  virtual ~Log() = default;

  virtual const std::string& name() const = 0;
  virtual uint32_t partition_count() const = 0;

  // Appends a record; calls `done` with its offset once it is durable (fsync'd embedded, acks=all on
  // Kafka). Appends to one partition are durable in call order. InvalidArgument for an unknown partition
  // or a value over max_record_bytes(); Transport/Io when the log cannot take it.
  virtual void append(uint32_t partition, std::string key, std::string value, AppendCallback done) = 0;
  // Blocking form of append().
  Result<Offset> append_sync(uint32_t partition, std::string key, std::string value);

  // Up to `max` records of a partition from offset `from` on, waiting up to `wait` for the first one.
  // Returns an empty vector when nothing arrived in time.
  virtual Result<std::vector<LogRecord>> read(uint32_t partition, Offset from, size_t max,
                                              std::chrono::milliseconds wait) = 0;
  // The offset the next append to `partition` will get.
  virtual Result<Offset> end_offset(uint32_t partition) = 0;
  // The first offset still kept: records below it were deleted by the log's retention (0 if none was).
  virtual Result<Offset> start_offset(uint32_t) { return Offset{0}; }

  // Consumer positions: `next` is the first offset the group has not finished.
  virtual Status commit(const std::string& group, uint32_t partition, Offset next) = 0;
  virtual Result<std::optional<Offset>> committed(const std::string& group, uint32_t partition) = 0;

  virtual size_t max_record_bytes() const { return 1 << 20; }
};

}  // namespace qim
