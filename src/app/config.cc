#include "app/config.h"

#include <algorithm>
#include <charconv>

#include "node/mailbox_node.h"

namespace qim {

namespace {

Error config_error(const std::string& var, const std::string& value, const std::string& why) {
  return Error(Errc::kConfig, var + "='" + value + "': " + why);
}

Result<uint64_t> parse_uint(const std::string& var, const std::string& value, uint64_t lo, uint64_t hi) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || p != value.data() + value.size()) {
    return config_error(var, value, "not a whole number");
  }
  if (v < lo || v > hi) {
    return config_error(var, value, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  }
  return v;
}

Result<std::string> one_of(const std::string& var, const std::string& value,
                           std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (value == a) return value;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  return config_error(var, value, "expected one of " + list);
}

// Test-only: the wall clock shifted by a fixed offset (QIM_TEST_CLOCK_OFFSET_MS).
class OffsetClock final : public Clock {
 public:
  explicit OffsetClock(int64_t offset_ms) : offset_ms_(offset_ms) {}
  int64_t now_ms() const override { return wall_.now_ms() + offset_ms_; }

 private:
  SystemClock wall_;
  int64_t offset_ms_;
};

// Decision 51: where the logs are embedded and a count is not given, a data directory keeps the count it
// was created with, and a new one gets embedded_default_partitions() of the CPUs when the store is local
// too (embedded, memory), 16 with a remote one. A count given by
// the variable is used as is (the log refuses to open if it differs from the one on disk).
Status resolve_log_partitions(AppConfig& c, const EnvLookup& getenv) {
  if (c.log.backend != "embedded") return {};
  // A shard worker of a remote store spends its page waiting on round trips, which more shards overlap:
  // there a new data directory keeps the distributed default (the count already in `c`).
  const bool local_store = c.store.backend == "embedded" || c.store.backend == "memory";
  auto cpus = allowed_cpus();
  const uint32_t per_cpu = embedded_default_partitions(cpus.ok() ? cpus->size() : 0);
  auto resolve = [&](const char* variable, const char* log, uint32_t& count) -> Status {
    if (getenv(variable)) return {};
    auto existing = existing_log_partitions(c.log, log);
    if (!existing.ok()) {
      return Error(Errc::kConfig, std::string(variable) + " is not set and the " + log +
                                      " log's partition count cannot be read: " + existing.error().message());
    }
    count = existing->value_or(local_store ? per_cpu : count);
    return {};
  };
  QIM_RETURN_IF_ERROR(resolve("QIM_SHARDS", "mailbox", c.shards));
  c.store.shard_count = c.shards;
  return resolve("QIM_OUTBOX_PARTITIONS", "outbox", c.outbox_partitions);
}

}  // namespace

uint32_t embedded_default_partitions(size_t cpus) {
  return static_cast<uint32_t>(std::clamp<size_t>(cpus, 2, 16));
}

EnvLookup with_overrides(EnvLookup base, std::map<std::string, std::string> overrides) {
  return [base = std::move(base), overrides = std::move(overrides)](const std::string& name) {
    if (auto it = overrides.find(name); it != overrides.end()) return std::optional<std::string>(it->second);
    return base(name);
  };
}

Result<AppConfig> app_config_from_env(const EnvLookup& getenv) {
  AppConfig c;
  QIM_ASSIGN_OR_RETURN(c.store, store_options_from_env(getenv));
  // Test-only (docs/running.md): the instance's clock runs this far ahead of the wall clock, so the e2e
  // suite can watch retention expire without waiting days. Store, gateway and tokens all use this clock.
  if (auto v = getenv("QIM_TEST_CLOCK_OFFSET_MS")) {
    QIM_ASSIGN_OR_RETURN(uint64_t ms, parse_uint("QIM_TEST_CLOCK_OFFSET_MS", *v, 0, 3650 * uint64_t{kDayMs}));
    c.store.clock = std::make_shared<OffsetClock>(static_cast<int64_t>(ms));
  }
  c.shards = c.store.shard_count;
  if (auto v = getenv("QIM_DATA_DIR")) c.data_dir = *v;  // emptiness checked by the store's options
  c.store.data_dir = c.data_dir + "/mailbox";
  c.log.data_dir = c.data_dir;
  QIM_ASSIGN_OR_RETURN(c.history, history_options_from_env(getenv, c.store, c.data_dir));
  if (auto v = getenv("QIM_LOG_BACKEND")) {
    QIM_ASSIGN_OR_RETURN(c.log.backend, one_of("QIM_LOG_BACKEND", *v, {"embedded", "kafka"}));
  }
  if (auto v = getenv("QIM_LOG_SEGMENT_BYTES")) {
    QIM_ASSIGN_OR_RETURN(c.log.segment_bytes,
                         parse_uint("QIM_LOG_SEGMENT_BYTES", *v, 1 << 16, uint64_t{1} << 34));
  }
  if (auto v = getenv("QIM_LOG_BATCH_INTERVAL_US")) {
    QIM_ASSIGN_OR_RETURN(uint64_t us, parse_uint("QIM_LOG_BATCH_INTERVAL_US", *v, 0, 100'000));
    c.log.batch_interval = std::chrono::microseconds(us);
  }
  if (auto v = getenv("QIM_LOG_MAX_QUEUED_APPENDS")) {
    QIM_ASSIGN_OR_RETURN(c.log.max_queued_appends,
                         parse_uint("QIM_LOG_MAX_QUEUED_APPENDS", *v, 0, 1'000'000));
  }
  if (auto v = getenv("QIM_KAFKA_BROKERS")) {
    c.log.kafka_brokers.clear();
    for (size_t start = 0; start <= v->size();) {
      const size_t comma = std::min(v->find(',', start), v->size());
      if (comma > start) c.log.kafka_brokers.push_back(v->substr(start, comma - start));
      start = comma + 1;
    }
    if (c.log.kafka_brokers.empty())
      return config_error("QIM_KAFKA_BROKERS", *v, "expected host:port[,host:port...]");
    for (const auto& b : c.log.kafka_brokers) {
      const size_t colon = b.rfind(':');
      if (colon == 0 || colon == std::string::npos ||
          !parse_uint("QIM_KAFKA_BROKERS", b.substr(colon + 1), 1, 65535).ok()) {
        return config_error("QIM_KAFKA_BROKERS", *v, "'" + b + "' is not host:port");
      }
    }
  }
  if (auto v = getenv("QIM_KAFKA_TOPIC_PREFIX")) {
    // Kafka topic names are at most 249 of [A-Za-z0-9._-]; leave room for the log's name.
    const bool legal =
        v->find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
        std::string::npos;
    if (!legal || v->size() > 200)
      return config_error("QIM_KAFKA_TOPIC_PREFIX", *v, "expected up to 200 of A-Z a-z 0-9 . _ -");
    c.log.kafka_topic_prefix = *v;
  }
  if (auto v = getenv("QIM_KAFKA_APPEND_TIMEOUT_MS")) {
    QIM_ASSIGN_OR_RETURN(uint64_t ms, parse_uint("QIM_KAFKA_APPEND_TIMEOUT_MS", *v, 100, 300'000));
    c.log.kafka_append_timeout = std::chrono::milliseconds(ms);
  }
  if (auto v = getenv("QIM_KAFKA_LINGER_MS")) {
    QIM_ASSIGN_OR_RETURN(uint64_t ms, parse_uint("QIM_KAFKA_LINGER_MS", *v, 0, 1000));
    c.log.kafka_linger = std::chrono::milliseconds(ms);
  }
  if (auto v = getenv("QIM_KAFKA_FETCH_WAIT_MS")) {
    QIM_ASSIGN_OR_RETURN(uint64_t ms, parse_uint("QIM_KAFKA_FETCH_WAIT_MS", *v, 0, 1000));
    c.log.kafka_fetch_wait = std::chrono::milliseconds(ms);
  }
  if (auto v = getenv("QIM_KAFKA_REPLICATION_FACTOR")) {
    QIM_ASSIGN_OR_RETURN(uint64_t n, parse_uint("QIM_KAFKA_REPLICATION_FACTOR", *v, 1, 16));
    c.log.kafka_replication_factor = static_cast<int>(n);
  }
  if (auto v = getenv("QIM_OUTBOX_PARTITIONS")) {
    QIM_ASSIGN_OR_RETURN(uint64_t n, parse_uint("QIM_OUTBOX_PARTITIONS", *v, 1, 4096));
    c.outbox_partitions = static_cast<uint32_t>(n);
  }
  QIM_RETURN_IF_ERROR(resolve_log_partitions(c, getenv));
  if (auto v = getenv("QIM_CPU_PLACEMENT")) {
    auto placement = parse_cpu_placement(*v);
    if (!placement.ok()) return config_error("QIM_CPU_PLACEMENT", *v, placement.error().message());
    c.cpu_placement = *std::move(placement);
  }
  // "auto" (or empty): shards from leases where a node runs alone (node/lease/lease_config.h); `qim up`
  // owns every shard.
  if (auto v = getenv("QIM_OWNED_SHARDS"); v && !v->empty() && *v != "auto") {
    auto shards = parse_shard_set(*v, c.shards);
    if (!shards.ok()) return config_error("QIM_OWNED_SHARDS", *v, shards.error().message());
    c.owned_shards = *std::move(shards);
  } else {
    for (uint32_t s = 0; s < c.shards; ++s) c.owned_shards.push_back(ShardId{s});
  }
  if (auto v = getenv("QIM_EPOCH")) {
    QIM_ASSIGN_OR_RETURN(uint64_t e, parse_uint("QIM_EPOCH", *v, 1, kMaxEpoch));
    c.epoch = Epoch{static_cast<uint32_t>(e)};
  }
  if (auto v = getenv("QIM_DELIVERY_MODE")) {
    QIM_ASSIGN_OR_RETURN(c.delivery_mode, one_of("QIM_DELIVERY_MODE", *v, {"hybrid", "push", "pull"}));
  }
  if (auto v = getenv("QIM_FANOUT_CHUNK_ENTRIES")) {
    QIM_ASSIGN_OR_RETURN(uint64_t n, parse_uint("QIM_FANOUT_CHUNK_ENTRIES", *v, 1, kMaxChunkEntries));
    c.chunk_entries = static_cast<uint32_t>(n);
  }
  if (auto v = getenv("QIM_TEST_NODE_CRASH_BETWEEN_CHUNKS")) {
    QIM_ASSIGN_OR_RETURN(std::string on, one_of("QIM_TEST_NODE_CRASH_BETWEEN_CHUNKS", *v, {"0", "1"}));
    c.test_crash_between_chunks = on == "1";
  }
  if (auto v = getenv("QIM_GROUP_MAX_MEMBERS")) {
    QIM_ASSIGN_OR_RETURN(uint64_t n, parse_uint("QIM_GROUP_MAX_MEMBERS", *v, 1, 1'000'000));
    c.group_max_members = static_cast<uint32_t>(n);
  }
  if (auto v = getenv("QIM_EDIT_WINDOW_MS")) {
    QIM_ASSIGN_OR_RETURN(uint64_t ms, parse_uint("QIM_EDIT_WINDOW_MS", *v, 0, 3650 * uint64_t{kDayMs}));
    c.lifecycle.edit_window_ms = static_cast<int64_t>(ms);
  }
  if (auto v = getenv("QIM_RECALL_WINDOW_MS")) {
    QIM_ASSIGN_OR_RETURN(uint64_t ms, parse_uint("QIM_RECALL_WINDOW_MS", *v, 0, 3650 * uint64_t{kDayMs}));
    c.lifecycle.recall_window_ms = static_cast<int64_t>(ms);
  }
  if (auto v = getenv("QIM_RECEIPT_READERS_MAX")) {
    QIM_ASSIGN_OR_RETURN(uint64_t n, parse_uint("QIM_RECEIPT_READERS_MAX", *v, 0, 1'000'000));
    c.receipt_readers_max = static_cast<uint32_t>(n);
  }
  if (auto v = getenv("QIM_DRAIN_TIMEOUT_MS")) {
    QIM_ASSIGN_OR_RETURN(uint64_t ms, parse_uint("QIM_DRAIN_TIMEOUT_MS", *v, 100, 3'600'000));
    c.drain_timeout = std::chrono::milliseconds(ms);
  }
  if (auto v = getenv("QIM_RETENTION_SWEEP_INTERVAL_MS")) {
    QIM_ASSIGN_OR_RETURN(uint64_t ms, parse_uint("QIM_RETENTION_SWEEP_INTERVAL_MS", *v, 100, kDayMs));
    c.retention_sweep_interval = std::chrono::milliseconds(ms);
  }
  if (auto v = getenv("QIM_RETENTION_SWEEP_BATCH")) {
    QIM_ASSIGN_OR_RETURN(uint64_t n, parse_uint("QIM_RETENTION_SWEEP_BATCH", *v, 1, 100'000));
    c.retention_sweep_batch = static_cast<uint32_t>(n);
  }
  if (auto v = getenv("QIM_LOG_LEVEL")) {
    QIM_ASSIGN_OR_RETURN(std::string level,
                         one_of("QIM_LOG_LEVEL", *v, {"trace", "debug", "info", "warn", "error"}));
    c.log_level = spdlog::level::from_str(level);
  }
  if (auto v = getenv("QIM_ADMIN_LISTEN")) {
    if (v->empty()) return config_error("QIM_ADMIN_LISTEN", *v, "must not be empty");
    c.admin_address = *v;
  }
  if (auto v = getenv("QIM_ADMIN_PORT")) {
    QIM_ASSIGN_OR_RETURN(uint64_t port, parse_uint("QIM_ADMIN_PORT", *v, 0, 65535));
    c.admin_port = static_cast<uint16_t>(port);
  }
  return c;
}

Status check_role_config(const std::string& role, const AppConfig& config) {
  const std::string what = "`qim " + role + "` runs apart from the other roles, so ";
  if (log_is_single_process(config.log)) {
    return Error(Errc::kConfig,
                 "QIM_LOG_BACKEND='" + config.log.backend + "': " + what +
                     "it needs a log other processes share, and the embedded log is single-process. Run "
                     "every role in one process with `qim up`, or set QIM_LOG_BACKEND=kafka (with "
                     "QIM_KAFKA_BROKERS) for separate processes.");
  }
  // The store and the history are opened by every role (the gateway reads both, the node writes the
  // store, the archiver writes the history); one kept in this process's directory would be another
  // process's blind spot.
  if (config.store.backend == "embedded" || config.store.backend == "memory") {
    return Error(Errc::kConfig,
                 "QIM_MAILBOX_STORE_BACKEND='" + config.store.backend + "': " + what +
                     "it needs a mailbox store other processes share, and this one lives in one process. "
                     "Set QIM_MAILBOX_STORE_BACKEND=redis (QIM_MAILBOX_REDIS) or scylla (QIM_CQL_HOSTS).");
  }
  if (config.history.backend == "embedded") {
    return Error(Errc::kConfig,
                 "QIM_HISTORY_BACKEND='embedded': " + what +
                     "it needs a history store other processes share (the archiver writes it, every gateway "
                     "reads it), and the embedded one lives in one process. Set QIM_HISTORY_BACKEND=redis or "
                     "scylla, or leave it unset to follow QIM_MAILBOX_STORE_BACKEND.");
  }
  return {};
}

}  // namespace qim
