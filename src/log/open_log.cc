#include "log/open_log.h"

#include "log/embedded/embedded_log.h"
#if defined(QIM_WITH_KAFKA_LOG)
#include "log/kafka/kafka_log.h"
#endif

namespace qim {

namespace {

std::string embedded_log_dir(const LogOptions& options, const std::string& name) {
  return options.data_dir + "/" + name + "-log";
}

}  // namespace

bool log_is_single_process(const LogOptions& options) {
  return options.backend != "kafka";
}

Result<std::optional<uint32_t>> existing_log_partitions(const LogOptions& options, const std::string& name) {
  if (options.backend != "embedded") return std::optional<uint32_t>();
  return embedded_log_partitions(embedded_log_dir(options, name));
}

Result<std::unique_ptr<Log>> open_log(const LogOptions& options, const std::string& name, uint32_t partitions,
                                      std::shared_ptr<spdlog::logger> logger,
                                      std::shared_ptr<const Clock> clock,
                                      std::optional<int64_t> retention_ms) {
  if (options.backend == "embedded") {
    EmbeddedLogOptions o;
    o.dir = embedded_log_dir(options, name);
    o.name = name;
    o.partitions = partitions;
    o.segment_bytes = options.segment_bytes;
    o.batch_interval = options.batch_interval;
    o.max_queued_appends = options.max_queued_appends;
    o.clock = std::move(clock);
    o.retention_ms = retention_ms;
    o.logger = std::move(logger);
    QIM_ASSIGN_OR_RETURN(auto log, EmbeddedLog::open(std::move(o)));
    return std::unique_ptr<Log>(std::move(log));
  }
  if (options.backend == "kafka") {
#if defined(QIM_WITH_KAFKA_LOG)
    KafkaLogOptions o;
    o.brokers = options.kafka_brokers;
    o.topic_prefix = options.kafka_topic_prefix;
    o.name = name;
    o.partitions = partitions;
    o.retention_ms = retention_ms;
    o.append_timeout = options.kafka_append_timeout;
    o.linger = options.kafka_linger;
    o.fetch_wait = options.kafka_fetch_wait;
    o.replication_factor = options.kafka_replication_factor;
    o.clock = std::move(clock);
    o.logger = std::move(logger);
    QIM_ASSIGN_OR_RETURN(auto log, KafkaLog::open(std::move(o)));
    return std::unique_ptr<Log>(std::move(log));
#else
    return Error(Errc::kConfig,
                 "QIM_LOG_BACKEND='kafka': the Kafka log was not built into this binary (configured with "
                 "-DQIM_WITH_KAFKA=OFF, as scripts/run.sh does); build with -DQIM_WITH_KAFKA=ON, e.g. "
                 "bash scripts/build.sh");
#endif
  }
  return Error(Errc::kConfig, "QIM_LOG_BACKEND='" + options.backend + "': expected embedded or kafka");
}

}  // namespace qim
