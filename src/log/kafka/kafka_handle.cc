#include "log/kafka/kafka_handle.h"

namespace qim::kafka {

namespace {

spdlog::level::level_enum level_of(int syslog_level) {
  // librdkafka reports a refused connection as an error (3); the operation that fails because of it says
  // so as a QIM error, so its own lines are one step lower.
  if (syslog_level <= 2) return spdlog::level::err;
  if (syslog_level <= 4) return spdlog::level::warn;
  if (syslog_level <= 6) return spdlog::level::info;
  return spdlog::level::debug;
}

void log_line(const rd_kafka_t* rk, int level, const char* facility, const char* buf) {
  auto* logger = static_cast<spdlog::logger*>(rd_kafka_opaque(rk));
  if (logger) logger->log(level_of(level), "kafka {} {}: {}", rd_kafka_name(rk), facility, buf);
}

void error_line(rd_kafka_t* rk, int err, const char* reason, void* opaque) {
  auto* logger = static_cast<spdlog::logger*>(opaque);
  if (!logger) return;
  // Unreachable brokers are reported again on every retry; the operation that fails says so once.
  const auto e = static_cast<rd_kafka_resp_err_t>(err);
  const bool transient = e == RD_KAFKA_RESP_ERR__TRANSPORT || e == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN;
  logger->log(transient ? spdlog::level::debug : spdlog::level::warn, "kafka {}: {} ({})", rd_kafka_name(rk),
              reason, rd_kafka_err2name(e));
}

}  // namespace

void HandleDeleter::operator()(rd_kafka_t* rk) const {
  // A consumer never subscribed, so there is no group membership to leave: do not wait for a broker.
  rd_kafka_destroy_flags(rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
}

std::string broker_list(const std::vector<std::string>& brokers) {
  std::string out;
  for (const auto& b : brokers) out += (out.empty() ? "" : ",") + b;
  return out;
}

Result<Handle> new_handle(rd_kafka_type_t type, const std::vector<std::string>& brokers,
                          const std::map<std::string, std::string>& settings, spdlog::logger* logger,
                          void (*conf_hook)(rd_kafka_conf_t*)) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  std::map<std::string, std::string> all = {
      {"bootstrap.servers", broker_list(brokers)},
      {"client.id", "qim"},
      {"reconnect.backoff.ms", "50"},
      {"reconnect.backoff.max.ms", "1000"},
      {"socket.connection.setup.timeout.ms", "5000"},
      {"topic.metadata.refresh.interval.ms", "10000"},
      {"log.connection.close", "false"},  // brokers close idle connections; that is no news
  };
  for (const auto& [k, v] : settings) all[k] = v;
  for (const auto& [k, v] : all) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return Error(Errc::kConfig, "Kafka client setting " + k + "=" + v + ": " + err);
    }
  }
  rd_kafka_conf_set_opaque(conf, logger);
  rd_kafka_conf_set_log_cb(conf, log_line);
  rd_kafka_conf_set_error_cb(conf, error_line);
  if (conf_hook) conf_hook(conf);
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);  // takes conf on success
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    return Error(Errc::kConfig, std::string("cannot create a Kafka client: ") + err);
  }
  return Handle(rk);
}

}  // namespace qim::kafka
