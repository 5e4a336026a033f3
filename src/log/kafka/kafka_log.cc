#include "log/kafka/kafka_log.h"

#include <spdlog/sinks/null_sink.h>

#include "core/thread_name.h"
#include "log/kafka/kafka_handle.h"
#include "log/kafka/kafka_topics.h"

namespace qim {

namespace {

size_t max_message_bytes(const KafkaLogOptions& o) {
  return o.max_record_bytes + KafkaLogOptions::kKeyAndFramingBytes;
}

// An existing topic keeps its configs; say so where they differ from what this process was configured
// with (e.g. QIM_OUTBOX_RETENTION_MS changed since the topic was created), naming the way to change them.
void warn_about_other_settings(rd_kafka_t* admin, const KafkaLogOptions& o, const kafka::TopicSpec& spec) {
  auto configs = kafka::topic_configs(admin, spec.name, o.request_timeout);
  if (!configs.ok()) {
    o.logger->warn("Kafka log {}: cannot read the configs of topic {}: {}", o.name, spec.name,
                   configs.error().to_string());
    return;
  }
  for (const auto& [key, wanted] : spec.configs) {
    auto it = configs->find(key);
    if (it == configs->end() || it->second == wanted) continue;
    o.logger->warn(
        "Kafka log {}: topic {} has {}={}, this process is configured for {}; the topic's value "
        "applies (change it with the Kafka admin tools if that is intended)",
        o.name, spec.name, key, it->second, wanted);
  }
}

}  // namespace

Result<std::unique_ptr<KafkaLog>> KafkaLog::open(KafkaLogOptions options) {
  if (options.brokers.empty())
    return Error(Errc::kConfig, "Kafka log " + options.name + ": no brokers given");
  if (options.partitions == 0) return Error(Errc::kConfig, "Kafka log " + options.name + ": 0 partitions");
  if (!options.logger) {
    options.logger = std::make_shared<spdlog::logger>("kafka-" + options.name,
                                                      std::make_shared<spdlog::sinks::null_sink_mt>());
  }
  if (!options.clock) options.clock = std::make_shared<SystemClock>();
  QIM_ASSIGN_OR_RETURN(kafka::Handle admin,
                       kafka::new_handle(RD_KAFKA_PRODUCER, options.brokers, {}, options.logger.get()));
  kafka::TopicSpec spec;
  spec.name = options.topic();
  spec.partitions = options.partitions;
  spec.replication_factor = options.replication_factor;
  spec.configs = options.topic_configs;
  spec.configs["retention.ms"] = std::to_string(options.retention_ms.value_or(-1));
  spec.configs["max.message.bytes"] = std::to_string(max_message_bytes(options));
  spec.configs["message.timestamp.type"] = "CreateTime";
  QIM_RETURN_IF_ERROR(kafka::ensure_topic(admin.get(), options.brokers, spec, options.connect_timeout));
  warn_about_other_settings(admin.get(), options, spec);
  kafka::ProducerOptions po{options.brokers,        options.topic(),
                            options.append_timeout, max_message_bytes(options),
                            options.logger,         options.linger};
  QIM_ASSIGN_OR_RETURN(auto producer, kafka::Producer::open(std::move(po)));
  options.logger->info("Kafka log {}: topic {} with {} partitions on {}", options.name, options.topic(),
                       options.partitions, kafka::broker_list(options.brokers));
  return std::unique_ptr<KafkaLog>(new KafkaLog(std::move(options), std::move(admin), std::move(producer)));
}

KafkaLog::KafkaLog(KafkaLogOptions options, kafka::Handle admin, std::unique_ptr<kafka::Producer> producer)
    : options_(std::move(options)),
      topic_(options_.topic()),
      admin_(std::move(admin)),
      producer_(std::move(producer)),
      readers_(kafka::ReaderOptions{options_.brokers, topic_, options_.partitions, options_.request_timeout,
                                    max_message_bytes(options_), options_.reader_idle_stop, options_.logger,
                                    options_.fetch_wait}),
      offsets_(
          kafka::GroupOffsetsOptions{options_.brokers, topic_, options_.request_timeout, options_.logger}) {
  events_ = std::thread([this] {
    set_thread_name("kafka-events");
    serve_events();
  });
}

void KafkaLog::serve_events() {
  std::unique_lock lock(events_mu_);
  while (!closing_) {
    lock.unlock();
    rd_kafka_poll(admin_.get(), 0);
    readers_.serve_events();
    offsets_.serve_events();
    lock.lock();
    events_cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return closing_; });
  }
}

KafkaLog::~KafkaLog() {
  close();
}

void KafkaLog::close() {
  readers_.close();
  producer_->close();
  {
    std::lock_guard lock(events_mu_);
    closing_ = true;
  }
  events_cv_.notify_all();
  if (events_.joinable()) events_.join();
}

Status KafkaLog::check_partition(uint32_t partition) const {
  if (partition < options_.partitions) return {};
  return Error(Errc::kInvalidArgument, options_.name + " log (Kafka topic " + topic_ + ") has no partition " +
                                           std::to_string(partition) + " (it has " +
                                           std::to_string(options_.partitions) + ")");
}

void KafkaLog::append(uint32_t partition, std::string key, std::string value, AppendCallback done) {
  Status refused = check_partition(partition);
  if (refused.ok() && value.size() > options_.max_record_bytes) {
    refused = Error(Errc::kInvalidArgument,
                    options_.name + " log: a record of " + std::to_string(value.size()) +
                        " bytes is over the limit of " + std::to_string(options_.max_record_bytes));
  }
  if (refused.ok() && key.size() > KafkaLogOptions::kKeyAndFramingBytes / 2) {
    refused = Error(Errc::kInvalidArgument,
                    options_.name + " log: a key of " + std::to_string(key.size()) + " bytes is too long");
  }
  if (!refused.ok()) {
    producer_->fail(std::move(done), refused.error());
    return;
  }
  producer_->produce(partition, std::move(key), std::move(value), options_.clock->now_ms(), std::move(done));
}

Result<std::vector<LogRecord>> KafkaLog::read(uint32_t partition, Offset from, size_t max,
                                              std::chrono::milliseconds wait) {
  QIM_RETURN_IF_ERROR(check_partition(partition));
  return readers_.read(partition, from.value, max, wait);
}

Result<Offset> KafkaLog::end_offset(uint32_t partition) {
  QIM_RETURN_IF_ERROR(check_partition(partition));
  QIM_ASSIGN_OR_RETURN(auto wm, kafka::watermarks(admin_.get(), topic_, partition, options_.request_timeout));
  return Offset{wm.second};
}

Result<Offset> KafkaLog::start_offset(uint32_t partition) {
  QIM_RETURN_IF_ERROR(check_partition(partition));
  QIM_ASSIGN_OR_RETURN(auto wm, kafka::watermarks(admin_.get(), topic_, partition, options_.request_timeout));
  return Offset{wm.first};
}

Status KafkaLog::commit(const std::string& group, uint32_t partition, Offset next) {
  QIM_ASSIGN_OR_RETURN(Offset end, end_offset(partition));
  if (next > end || next.value > kMaxOffset) {
    return Error(Errc::kInvalidArgument, "cannot commit " + group + " at offset " +
                                             std::to_string(next.value) + " of " + options_.name +
                                             " partition " + std::to_string(partition) +
                                             ": the log ends at " + std::to_string(end.value));
  }
  return offsets_.commit(group, partition, next.value);
}

Result<std::optional<Offset>> KafkaLog::committed(const std::string& group, uint32_t partition) {
  QIM_RETURN_IF_ERROR(check_partition(partition));
  QIM_ASSIGN_OR_RETURN(auto next, offsets_.committed(group, partition));
  if (!next) return std::optional<Offset>();
  return std::optional(Offset{*next});
}

Result<std::map<std::string, std::string>> KafkaLog::topic_configs() {
  return kafka::topic_configs(admin_.get(), topic_, options_.request_timeout);
}

}  // namespace qim
