#include "log/open_log.h"

#include "log/embedded/embedded_log.h"

namespace qim {

bool log_is_single_process(const LogOptions& options) {
  return options.backend == "embedded";
}

Result<std::unique_ptr<Log>> open_log(const LogOptions& options, const std::string& name, uint32_t partitions,
                                      std::shared_ptr<spdlog::logger> logger,
                                      std::shared_ptr<const Clock> clock,
                                      std::optional<int64_t> retention_ms) {
  if (options.backend == "embedded") {
    EmbeddedLogOptions o;
    o.dir = options.data_dir + "/" + name + "-log";
    o.name = name;
    o.partitions = partitions;
    o.segment_bytes = options.segment_bytes;
    o.clock = std::move(clock);
    o.retention_ms = retention_ms;
    o.logger = std::move(logger);
    QIM_ASSIGN_OR_RETURN(auto log, EmbeddedLog::open(std::move(o)));
    return std::unique_ptr<Log>(std::move(log));
  }
  if (options.backend == "kafka") {
    return Error(Errc::kConfig,
                 "QIM_LOG_BACKEND='kafka': the Kafka log is not built into this binary yet; use 'embedded'");
  }
  return Error(Errc::kConfig, "QIM_LOG_BACKEND='" + options.backend + "': expected embedded or kafka");
}

}  // namespace qim
