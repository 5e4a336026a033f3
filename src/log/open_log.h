#pragma once
// Which log implementation backs the Outbox and the mailbox log, and the factory that opens one. The
// embedded log is single-process (its directory is locked); Kafka lets each role run apart.

#include <spdlog/logger.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "log/kafka/kafka_defaults.h"
#include "log/log.h"

namespace qim {

struct LogOptions {
  std::string backend = "embedded";      // QIM_LOG_BACKEND: embedded | kafka
  std::string data_dir = "qim-data";     // embedded: <data_dir>/<name>-log
  uint64_t segment_bytes = 64ull << 20;  // QIM_LOG_SEGMENT_BYTES (embedded)
  // QIM_LOG_BATCH_INTERVAL_US (embedded): the least time between two writer batches of a log
  // (EmbeddedLogOptions::batch_interval, decision 50).
  std::chrono::microseconds batch_interval{3000};
  // QIM_LOG_MAX_QUEUED_APPENDS (embedded): the most appends a log queues while its writer waits for the disk
  // (EmbeddedLogOptions::max_queued_appends, decision 106); 0: no bound. The pipeline applies it to the
  // Outbox only, the log clients feed (the mailbox log's appenders wait for their own batches).
  size_t max_queued_appends = 8192;
  std::vector<std::string> kafka_brokers = {"127.0.0.1:19092"};  // QIM_KAFKA_BROKERS (kafka)
  std::string kafka_topic_prefix = "qim.";                       // QIM_KAFKA_TOPIC_PREFIX (kafka)
  // kafka: QIM_KAFKA_APPEND_TIMEOUT_MS, QIM_KAFKA_LINGER_MS, QIM_KAFKA_FETCH_WAIT_MS (kafka_defaults.h)
  std::chrono::milliseconds kafka_append_timeout = kafka::kDefaultAppendTimeout;
  std::chrono::milliseconds kafka_linger = kafka::kDefaultLinger;
  std::chrono::milliseconds kafka_fetch_wait = kafka::kDefaultFetchWait;
  int kafka_replication_factor = 1;  // QIM_KAFKA_REPLICATION_FACTOR (kafka)
};

// True if every role using logs of this backend must share one process.
bool log_is_single_process(const LogOptions& options);

// The partition count the existing log `name` was created with: for the embedded log, what its directory
// under data_dir says (nullopt if there is none yet, CorruptEntry or Io if it cannot be read); nullopt
// for Kafka, whose topics are not looked up here.
Result<std::optional<uint32_t>> existing_log_partitions(const LogOptions& options, const std::string& name);

// Opens (creating if needed) the log `name` ("outbox", "mailbox") with `partitions` partitions. Config for
// an unknown or unbuilt backend, or a partition count that differs from the existing log's; Io or
// CorruptEntry when the embedded log cannot be opened or recovered.
// With `retention_ms` the log deletes records older than that (whole segments, embedded/embedded_log.h;
// the topic's retention.ms on Kafka, kafka/kafka_log.h). Kafka: Transport or Timeout naming the brokers
// when the cluster cannot be reached within KafkaLogOptions::connect_timeout.
Result<std::unique_ptr<Log>> open_log(const LogOptions& options, const std::string& name, uint32_t partitions,
                                      std::shared_ptr<spdlog::logger> logger,
                                      std::shared_ptr<const Clock> clock = nullptr,
                                      std::optional<int64_t> retention_ms = std::nullopt);

}  // namespace qim
