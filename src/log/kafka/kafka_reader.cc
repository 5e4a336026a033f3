#include "log/kafka/kafka_reader.h"

#include <thread>

#include "log/kafka/kafka_errors.h"

namespace qim::kafka {

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

constexpr milliseconds kWakeSlice{100};  // how often a waiting read looks at close()
constexpr milliseconds kRetryPause{50};  // between two watermark queries while metadata is stale

}  // namespace

Result<std::pair<uint64_t, uint64_t>> watermarks(rd_kafka_t* rk, const std::string& topic, uint32_t partition,
                                                 milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  while (true) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now());
    int64_t low = 0, high = 0;
    rd_kafka_resp_err_t err =
        rd_kafka_query_watermark_offsets(rk, topic.c_str(), static_cast<int32_t>(partition), &low, &high,
                                         static_cast<int>(std::max<int64_t>(1, left.count())));
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      return std::pair<uint64_t, uint64_t>(static_cast<uint64_t>(std::max<int64_t>(low, 0)),
                                           static_cast<uint64_t>(std::max<int64_t>(high, 0)));
    }
    // A handle's first metadata of a new topic, or a leader change, is stale for a moment: ask again.
    const bool stale =
        err == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION || err == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
        err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION;
    if (!stale || SteadyClock::now() + kRetryPause >= deadline)
      return error_of(err, "offsets of Kafka topic " + topic + " partition " + std::to_string(partition));
    std::this_thread::sleep_for(kRetryPause);
  }
}

ReaderPool::ReaderPool(ReaderOptions options) : options_(std::move(options)) {}

ReaderPool::~ReaderPool() {
  close();
  std::lock_guard lock(mu_);
  for (auto& lane : lanes_) {
    for (uint32_t p = 0; p < lane->parts.size(); ++p) {
      if (lane->parts[p].started) rd_kafka_consume_stop(lane->rkt.get(), static_cast<int32_t>(p));
    }
    lane->rkt.reset();  // before the handle
  }
}

void ReaderPool::serve_events() {
  std::vector<std::pair<Lane*, uint32_t>> idle;
  {
    std::lock_guard lock(mu_);
    const auto now = SteadyClock::now();
    for (auto& lane : lanes_) {
      rd_kafka_poll(lane->rk.get(), 0);
      for (uint32_t p = 0; p < lane->parts.size(); ++p) {
        auto& part = lane->parts[p];
        if (!part.started || part.busy || now - part.last_read < options_.idle_stop) continue;
        part.busy = true;  // no read takes it while it stops
        idle.emplace_back(lane.get(), p);
      }
    }
  }
  for (auto [lane, p] : idle) {
    stop(*lane, p);
    release(*lane, p);
    idle_stops_++;
  }
}

Result<std::unique_ptr<ReaderPool::Lane>> ReaderPool::new_lane() {
  const bool hold = options_.fetch_wait.count() > 0;
  const std::map<std::string, std::string> settings = {
      // A position below the log start is reported, never silently moved (Log::read's ExpiredCursor).
      {"auto.offset.reset", "error"},
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
      {"fetch.wait.max.ms", hold ? std::to_string(options_.fetch_wait.count()) : "100"},
      {"fetch.min.bytes", hold ? std::to_string(ReaderOptions::kFetchBatchBytes) : "1"},
      {"fetch.message.max.bytes", std::to_string(options_.max_message_bytes)},
      // Prefetch per partition and lane: enough for a few batches, not the default 64 MiB.
      {"queued.max.messages.kbytes", "1024"},
      {"queued.min.messages", "2000"},
  };
  QIM_ASSIGN_OR_RETURN(Handle rk,
                       new_handle(RD_KAFKA_CONSUMER, options_.brokers, settings, options_.logger.get()));
  auto lane = std::make_unique<Lane>();
  lane->rkt.reset(rd_kafka_topic_new(rk.get(), options_.topic.c_str(), nullptr));
  if (!lane->rkt) return error_of(rd_kafka_last_error(), "Kafka topic " + options_.topic);
  lane->rk = std::move(rk);
  lane->parts.resize(options_.partitions);
  return lane;
}

Result<ReaderPool::Lane*> ReaderPool::acquire(uint32_t partition, uint64_t from) {
  std::lock_guard lock(mu_);
  Lane* idle = nullptr;
  for (auto& lane : lanes_) {
    auto& part = lane->parts[partition];
    if (part.busy) continue;
    if (part.started && part.next == from) {
      part.busy = true;
      return lane.get();
    }
    // Prefer a lane not fetching this partition: a started one may be where another reader continues.
    if (!idle || (idle->parts[partition].started && !part.started)) idle = lane.get();
  }
  if (!idle) {
    QIM_ASSIGN_OR_RETURN(auto lane, new_lane());
    lanes_.push_back(std::move(lane));
    idle = lanes_.back().get();
  }
  idle->parts[partition].busy = true;
  return idle;
}

void ReaderPool::release(Lane& lane, uint32_t partition) {
  std::lock_guard lock(mu_);
  lane.parts[partition].busy = false;
  lane.parts[partition].last_read = SteadyClock::now();
}

void ReaderPool::stop(Lane& lane, uint32_t partition) {
  rd_kafka_consume_stop(lane.rkt.get(), static_cast<int32_t>(partition));
  std::lock_guard lock(mu_);
  lane.parts[partition].started = false;
}

Result<uint64_t> ReaderPool::position(Lane& lane, uint32_t partition, uint64_t from) {
  QIM_ASSIGN_OR_RETURN(auto wm,
                       watermarks(lane.rk.get(), options_.topic, partition, options_.request_timeout));
  const std::string where = "Kafka topic " + options_.topic + " partition " + std::to_string(partition);
  if (from < wm.first) {
    return Error(Errc::kExpiredCursor, where + ": offset " + std::to_string(from) +
                                           " is below the log start " + std::to_string(wm.first) +
                                           " (older records were deleted by the log's retention); resume at "
                                           "the start or later");
  }
  if (from > wm.second) {
    return Error(Errc::kInvalidArgument, where + ": offset " + std::to_string(from) + " is beyond the end " +
                                             std::to_string(wm.second));
  }
  bool started = false;
  {
    std::lock_guard lock(mu_);
    started = lane.parts[partition].started;
  }
  if (started) stop(lane, partition);
  if (rd_kafka_consume_start(lane.rkt.get(), static_cast<int32_t>(partition), static_cast<int64_t>(from)) !=
      0) {
    return error_of(rd_kafka_last_error(), "cannot read " + where + " from offset " + std::to_string(from));
  }
  std::lock_guard lock(mu_);
  lane.parts[partition].started = true;
  lane.parts[partition].next = from;
  return wm.second;
}

Error ReaderPool::fetch_error(Lane& lane, uint32_t partition, uint64_t at, rd_kafka_resp_err_t err) {
  stop(lane, partition);  // the fetcher is in an error state: the next read repositions
  const std::string what = "reading Kafka topic " + options_.topic + " partition " +
                           std::to_string(partition) + " at offset " + std::to_string(at);
  if (errc_of(err) == Errc::kExpiredCursor) {
    // Retention moved the log start past our position while we read: say where it is now.
    auto s = position(lane, partition, at);
    stop(lane, partition);
    if (!s.ok()) return s.error();
    return Error(Errc::kTransport, what + ": the broker reported " + rd_kafka_err2name(err) +
                                       " but the offset is in range now; read again");
  }
  return error_of(err, what);
}

Result<std::vector<LogRecord>> ReaderPool::read(uint32_t partition, uint64_t from, size_t max,
                                                milliseconds wait) {
  std::vector<LogRecord> out;
  if (max == 0 || closed_) return out;
  QIM_ASSIGN_OR_RETURN(Lane * lane, acquire(partition, from));
  struct Releaser {
    ReaderPool* pool;
    Lane* lane;
    uint32_t partition;
    ~Releaser() { pool->release(*lane, partition); }
  } releaser{this, lane, partition};

  bool at_from = false;
  {
    std::lock_guard lock(mu_);
    at_from = lane->parts[partition].started && lane->parts[partition].next == from;
  }
  // The end as far as this lane knows it: records below it exist, so the read waits for them even with a
  // zero `wait` (callers read "what is there" with wait 0, as the embedded log serves it at once).
  int64_t known_end = -1;
  if (at_from) {
    int64_t low = 0;
    rd_kafka_get_watermark_offsets(lane->rk.get(), options_.topic.c_str(), static_cast<int32_t>(partition),
                                   &low,
                                   &known_end);  // cached from the lane's last fetch: no round trip
  } else {
    QIM_ASSIGN_OR_RETURN(uint64_t end, position(*lane, partition, from));
    known_end = static_cast<int64_t>(end);
  }
  const bool records_exist = known_end > static_cast<int64_t>(from);
  if (records_exist) wait = std::max(wait, options_.request_timeout);

  uint64_t next = from;
  // Takes one fetched message: a record, or the fetcher's error. False once reading must end.
  std::optional<Error> failed;
  auto take = [&](rd_kafka_message_t* raw) {
    Message m(raw);
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) return true;
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      failed = fetch_error(*lane, partition, next, m->err);
      return false;
    }
    LogRecord r;
    r.partition = partition;
    r.offset = Offset{static_cast<uint64_t>(m->offset)};
    rd_kafka_timestamp_type_t type;
    r.timestamp_ms = rd_kafka_message_timestamp(m.get(), &type);
    if (m->key) r.key.assign(static_cast<const char*>(m->key), m->key_len);
    if (m->payload) r.value.assign(static_cast<const char*>(m->payload), m->len);
    next = r.offset.value + 1;
    out.push_back(std::move(r));
    return true;
  };

  const auto deadline = SteadyClock::now() + wait;
  const auto rkt = lane->rkt.get();
  const auto p = static_cast<int32_t>(partition);
  while (out.empty() && !failed && !closed_) {
    // Rounded up, and at least 1 ms: a slice truncated to 0 ms would make rd_kafka_consume return at
    // once and this loop spin on the clock for the last fraction of every wait (seen in profiles: most
    // of an idle consumer's CPU).
    const auto left = std::chrono::ceil<milliseconds>(deadline - SteadyClock::now());
    const auto slice = std::clamp(left, milliseconds(1), kWakeSlice);
    rd_kafka_message_t* first = rd_kafka_consume(rkt, p, static_cast<int>(slice.count()));
    if (first) {
      take(first);
    } else if (SteadyClock::now() >= deadline) {
      break;
    }
  }
  if (!out.empty() && !failed && out.size() < max) {
    // What is already fetched, without waiting (consume_batch would wait for a full batch).
    std::vector<rd_kafka_message_t*> more(std::min<size_t>(max - out.size(), 1024));
    while (out.size() < max && !failed) {
      const size_t want = std::min(more.size(), max - out.size());
      ssize_t n = rd_kafka_consume_batch(rkt, p, 0, more.data(), want);
      if (n <= 0) break;
      for (ssize_t i = 0; i < n; ++i) {
        if (failed) {
          rd_kafka_message_destroy(more[static_cast<size_t>(i)]);
        } else {
          take(more[static_cast<size_t>(i)]);
        }
      }
      if (static_cast<size_t>(n) < want) break;
    }
  }
  {
    std::lock_guard lock(mu_);
    lane->parts[partition].next = next;
  }
  // Records before a failure are returned; the failure shows at the next read, which starts after them.
  if (failed && out.empty()) return *std::move(failed);
  if (out.empty() && records_exist && !closed_) {
    stop(*lane, partition);  // something is wrong with this lane's fetch: the next read starts afresh
    return Error(Errc::kTimeout, "Kafka topic " + options_.topic + " partition " + std::to_string(partition) +
                                     ": the records from offset " + std::to_string(from) +
                                     " were not fetched within " + std::to_string(wait.count()) + " ms");
  }
  return out;
}

}  // namespace qim::kafka
