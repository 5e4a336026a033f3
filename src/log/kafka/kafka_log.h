#pragma once
// The Kafka log: qim::Log on a Kafka topic, for the distributed deployment where every role is its own
// process. One topic per log (`<prefix><name>`, e.g. qim.outbox), created by QIM with the configured
// partition count, replication factor and retention.ms; Kafka offsets are the record offsets.
//
//   appends    the idempotent producer (kafka_producer.h): acks=all, `done` from the delivery report only,
//              each append bounded by append_timeout (message.timeout.ms)
//   reads      consumer lanes positioned at the caller's offset (kafka_reader.h)
//   positions  group offsets committed standalone per group (kafka_offsets.h)
//   topics     created and checked through the Admin API (kafka_topics.h)
//
// Thread safety: every method may be called concurrently from any thread; close() wakes blocked reads.

#include <spdlog/logger.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "log/kafka/kafka_defaults.h"
#include "log/kafka/kafka_offsets.h"
#include "log/kafka/kafka_producer.h"
#include "log/kafka/kafka_reader.h"
#include "log/log.h"

namespace qim {

struct KafkaLogOptions {
  std::vector<std::string> brokers = {"127.0.0.1:19092"};  // QIM_KAFKA_BROKERS
  std::string topic_prefix = "qim.";                       // QIM_KAFKA_TOPIC_PREFIX
  std::string name = "log";                                // the topic is topic_prefix + name
  uint32_t partitions = 1;  // at creation; an existing topic with another count is a Config error
  int replication_factor = 1;
  // retention.ms of a topic QIM creates; nullopt: -1, keep every record (as the embedded log does).
  std::optional<int64_t> retention_ms;
  // The largest value append() takes. The topic's max.message.bytes (and the producer's message.max.bytes)
  // are set above it by kKeyAndFramingBytes, room for the key and the batch framing.
  size_t max_record_bytes = 1'000'000;
  // How long an append may wait for its acknowledgement (message.timeout.ms), then it fails with Timeout.
  std::chrono::milliseconds append_timeout = kafka::kDefaultAppendTimeout;  // QIM_KAFKA_APPEND_TIMEOUT_MS
  // How long an append may wait for others to share its produce request (linger.ms), and how long a fetch
  // may wait at the broker for a batch to gather (kafka_reader.h). Each costs that much latency at most
  // per hop; both save broker requests, the broker's largest cost under many small messages (decisions 37,
  // 39).
  std::chrono::milliseconds linger = kafka::kDefaultLinger;         // QIM_KAFKA_LINGER_MS
  std::chrono::milliseconds fetch_wait = kafka::kDefaultFetchWait;  // QIM_KAFKA_FETCH_WAIT_MS
  // How long open() may wait for the cluster (metadata, topic creation, leaders).
  std::chrono::milliseconds connect_timeout{10'000};
  // Bound of one watermark query, commit or committed() call.
  std::chrono::milliseconds request_timeout{5000};
  // A partition no read used for this long stops fetching (kafka_reader.h); the next read repositions.
  std::chrono::milliseconds reader_idle_stop{10'000};
  std::map<std::string, std::string> topic_configs;  // more topic configs at creation
  std::shared_ptr<const Clock> clock;                // record timestamps (CreateTime); SystemClock if null
  std::shared_ptr<spdlog::logger> logger;            // librdkafka's lines and failures; silent if null

  std::string topic() const { return topic_prefix + name; }
  static constexpr size_t kKeyAndFramingBytes = 64 * 1024;
};

class KafkaLog final : public Log {
 public:
  // Connects, creates the topic if missing and waits until every partition has a leader. Config if an
  // existing topic has another partition count (both named) or a setting is refused; Transport or Timeout
  // naming the brokers if the cluster is not reachable within connect_timeout.
  static Result<std::unique_ptr<KafkaLog>> open(KafkaLogOptions options);
  ~KafkaLog() override;

  const std::string& name() const override { return options_.name; }
  uint32_t partition_count() const override { return options_.partitions; }
  // `done` runs on the producer's thread with the record's Kafka offset once every in-sync replica has it.
  // InvalidArgument (through `done`) for an unknown partition, a value over max_record_bytes() or a key
  // over kKeyAndFramingBytes/2; Timeout after append_timeout without acknowledgement; Config if the broker
  // refuses its CreateTime (this process's clock is too far ahead); Transport when the cluster refuses it
  // otherwise or the log is closed. Appends to one partition are durable in call order.
  void append(uint32_t partition, std::string key, std::string value, AppendCallback done) override;
  // Timestamps are the records' CreateTime (the clock's now at append). InvalidArgument for an unknown
  // partition or `from` beyond end_offset(); ExpiredCursor for `from` below start_offset() (deleted by
  // retention); an empty vector after `wait`, or at once after close().
  Result<std::vector<LogRecord>> read(uint32_t partition, Offset from, size_t max,
                                      std::chrono::milliseconds wait) override;
  // The high watermark (acks=all: every acknowledged record is below it).
  Result<Offset> end_offset(uint32_t partition) override;
  // The low watermark (retention moves it on).
  Result<Offset> start_offset(uint32_t partition) override;
  // Any position up to end_offset() may be committed, also an earlier one (a replay); InvalidArgument
  // beyond it. Committed standalone: no group membership, other processes may commit other partitions.
  Status commit(const std::string& group, uint32_t partition, Offset next) override;
  Result<std::optional<Offset>> committed(const std::string& group, uint32_t partition) override;
  size_t max_record_bytes() const override { return options_.max_record_bytes; }

  const std::string& topic() const { return topic_; }
  kafka::Producer& producer() { return *producer_; }
  const kafka::ReaderPool& readers() const { return readers_; }
  // The topic's configuration as the broker reports it (DescribeConfigs), e.g. "retention.ms".
  Result<std::map<std::string, std::string>> topic_configs();
  // Waits for appends in flight (up to append_timeout), fails the rest, wakes blocked reads. Idempotent;
  // the destructor calls it.
  void close();

 private:
  KafkaLog(KafkaLogOptions options, kafka::Handle admin, std::unique_ptr<kafka::Producer> producer);
  Status check_partition(uint32_t partition) const;
  // Polls the handles nobody else polls (admin, reader lanes, groups) until close().
  void serve_events();

  KafkaLogOptions options_;
  std::string topic_;
  kafka::Handle admin_;  // topics, configs and watermarks (thread-safe)
  std::unique_ptr<kafka::Producer> producer_;
  kafka::ReaderPool readers_;
  kafka::GroupOffsets offsets_;
  std::mutex events_mu_;
  std::condition_variable events_cv_;
  bool closing_ = false;  // guarded by events_mu_
  std::thread events_;    // serve_events()
};

}  // namespace qim
