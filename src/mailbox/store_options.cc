#include "mailbox/store_options.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <sstream>

namespace qim {

namespace {

Error config_error(const std::string& var, const std::string& value, const std::string& why) {
  return Error(Errc::kConfig, var + "='" + value + "': " + why);
}

Result<int64_t> parse_int(const std::string& var, const std::string& value, int64_t lo, int64_t hi) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size())
    return config_error(var, value, "not an integer");
  if (v < lo || v > hi) {
    return config_error(var, value, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  }
  return v;
}

std::vector<std::string> split_list(const std::string& value) {
  std::vector<std::string> out;
  std::stringstream ss(value);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe): read at start-up only
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

Result<StoreOptions> store_options_from_env(const EnvLookup& getenv) {
  StoreOptions o;
  if (auto v = getenv("QIM_MAILBOX_STORE_BACKEND")) {
    static constexpr const char* kKnown[] = {"embedded", "memory", "redis", "scylla", "scylla-lwt"};
    bool known = false;
    for (const char* k : kKnown) known = known || *v == k;
    if (!known)
      return config_error("QIM_MAILBOX_STORE_BACKEND", *v,
                          "expected embedded, memory, redis, scylla or scylla-lwt");
    o.backend = *v;
  }
  if (auto v = getenv("QIM_DATA_DIR")) {
    if (v->empty()) return config_error("QIM_DATA_DIR", *v, "must not be empty");
    o.data_dir = *v + "/mailbox";
  }
  if (auto v = getenv("QIM_SHARDS")) {
    QIM_ASSIGN_OR_RETURN(int64_t n, parse_int("QIM_SHARDS", *v, 1, kMaxShards));
    o.shard_count = static_cast<uint32_t>(n);
  }
  if (auto v = getenv("QIM_MAILBOX_RETENTION_MS")) {
    QIM_ASSIGN_OR_RETURN(o.retention_ms, parse_int("QIM_MAILBOX_RETENTION_MS", *v, 60'000, 3650 * kDayMs));
  }
  if (auto v = getenv("QIM_MAILBOX_FINISH_PAGE_MAX")) {
    QIM_ASSIGN_OR_RETURN(int64_t n, parse_int("QIM_MAILBOX_FINISH_PAGE_MAX", *v, 1, 1024));
    o.page_max = static_cast<uint32_t>(n);
  }
  if (auto v = getenv("QIM_MAILBOX_FENCE_CHECK_MS")) {
    // Up to an hour: beyond that a stale owner would go on finishing for too long to call it fenced.
    QIM_ASSIGN_OR_RETURN(o.fence_check_ms, parse_int("QIM_MAILBOX_FENCE_CHECK_MS", *v, 1, 3'600'000));
  }
  if (auto v = getenv("QIM_MAILBOX_FENCE_CHECK_PAGES")) {
    QIM_ASSIGN_OR_RETURN(int64_t n, parse_int("QIM_MAILBOX_FENCE_CHECK_PAGES", *v, 1, 1'000'000));
    o.fence_check_pages = static_cast<uint32_t>(n);
  }
  if (auto v = getenv("QIM_OUTBOX_RETENTION_MS")) {
    QIM_ASSIGN_OR_RETURN(o.outbox_retention_ms,
                         parse_int("QIM_OUTBOX_RETENTION_MS", *v, 1, int64_t{1} << 50));
  }
  if (auto v = getenv("QIM_DISPATCH_RETENTION_MS")) {
    QIM_ASSIGN_OR_RETURN(o.dispatch_retention_ms,
                         parse_int("QIM_DISPATCH_RETENTION_MS", *v, 1, int64_t{1} << 50));
  }
  if (auto v = getenv("QIM_MAILBOX_REDIS")) {
    o.redis_endpoints = split_list(*v);
    if (o.redis_endpoints.empty())
      return config_error("QIM_MAILBOX_REDIS", *v, "expected host:port[,host:port...]");
  }
  if (auto v = getenv("QIM_MAILBOX_REDIS_PREFIX")) {
    if (v->empty() || v->size() > 64 || v->find_first_of(" \t\r\n{}*?[]") != std::string::npos) {
      return config_error("QIM_MAILBOX_REDIS_PREFIX", *v,
                          "expected 1..64 characters without spaces, braces or glob characters");
    }
    o.redis_key_prefix = *v;
  }
  if (auto v = getenv("QIM_CQL_HOSTS")) {
    o.cql_hosts = split_list(*v);
    if (o.cql_hosts.empty()) return config_error("QIM_CQL_HOSTS", *v, "expected host[,host...]");
  }
  if (auto v = getenv("QIM_CQL_KEYSPACE")) {
    // Letters, digits and underscores (what CQL takes unquoted), 1..64 bytes.
    const bool ok = !v->empty() && v->size() <= 64 && std::all_of(v->begin(), v->end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    if (!ok) {
      return config_error("QIM_CQL_KEYSPACE", *v, "expected letters, digits and underscores");
    }
    o.cql_keyspace = *v;
  }
  if (auto v = getenv("QIM_CQL_RF")) {
    QIM_ASSIGN_OR_RETURN(int64_t n, parse_int("QIM_CQL_RF", *v, 1, 5));
    o.cql_replication_factor = static_cast<uint32_t>(n);
  }
  if (auto v = getenv("QIM_CQL_BATCH_ROWS")) {
    QIM_ASSIGN_OR_RETURN(int64_t n, parse_int("QIM_CQL_BATCH_ROWS", *v, 1, 256));
    o.cql_batch_rows = static_cast<uint32_t>(n);
  }
  return o;
}

Status check_identity_ttl_covers_replays(const StoreOptions& o) {
  const int64_t outbox = o.outbox_retention();
  const int64_t dispatch = o.dispatch_retention_ms.value_or(kDefaultDispatchRetentionMs);
  if (outbox + dispatch >= kDispatchIdentityTtlSeconds * 1000) {
    return Error(Errc::kConfig, "QIM_OUTBOX_RETENTION_MS (" + std::to_string(outbox) +
                                    ") + QIM_DISPATCH_RETENTION_MS (" + std::to_string(dispatch) +
                                    ") must be below the 31-day dispatch identity TTL (" +
                                    std::to_string(kDispatchIdentityTtlSeconds * 1000) +
                                    " ms): a replay could outlive the identity and be materialised twice");
  }
  return {};
}

}  // namespace qim
