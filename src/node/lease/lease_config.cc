#include "node/lease/lease_config.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <random>

#include "node/lease/redis_lease_store.h"
#if defined(QIM_WITH_CQL_LEASES)
#include "node/lease/cql_lease_store.h"
#endif

namespace qim {

namespace {

Result<int64_t> parse_ms(const std::string& var, const std::string& value, int64_t lo, int64_t hi) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || p != value.data() + value.size()) {
    return Error(Errc::kConfig, var + "='" + value + "': not an integer");
  }
  if (v < lo || v > hi) {
    return Error(Errc::kConfig, var + "='" + value + "': must be between " + std::to_string(lo) + " and " +
                                    std::to_string(hi));
  }
  return v;
}

std::string default_node_id() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::snprintf(host, sizeof host, "node");
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%08x", rd());
  return std::string(host) + "-" + std::to_string(::getpid()) + "-" + suffix;
}

}  // namespace

bool shard_leases_enabled(const EnvLookup& getenv) {
  auto v = getenv("QIM_OWNED_SHARDS");
  return !v || v->empty() || *v == "auto";
}

Result<OwnershipOptions> ownership_options_from_env(const EnvLookup& getenv, const StoreOptions& store) {
  OwnershipOptions o;
  o.shard_count = store.shard_count;
  o.node_id = getenv("QIM_NODE_ID").value_or("");
  if (o.node_id.empty()) o.node_id = default_node_id();
  if (auto v = getenv("QIM_SHARD_LEASE_TTL_MS")) {
    QIM_ASSIGN_OR_RETURN(int64_t ms, parse_ms("QIM_SHARD_LEASE_TTL_MS", *v, 30, 3'600'000));
    o.ttl = std::chrono::milliseconds(ms);
  }
  // The longest a store call takes before it fails (RedisStoreOptions::command_timeout, the CQL request
  // timeout): a write the guard let start just before the deadline has ended within the margin.
  const std::chrono::milliseconds call_timeout = store.backend == "redis" ? std::chrono::milliseconds(2000)
                                                 : store.backend.starts_with("scylla")
                                                     ? std::chrono::milliseconds(5000)
                                                     : std::chrono::milliseconds(0);
  o.margin = std::max(o.ttl * 3 / 10, call_timeout);
  if (auto v = getenv("QIM_SHARD_LEASE_MARGIN_MS")) {
    QIM_ASSIGN_OR_RETURN(int64_t ms, parse_ms("QIM_SHARD_LEASE_MARGIN_MS", *v, 1, o.ttl.count()));
    o.margin = std::chrono::milliseconds(ms);
  }
  if (auto v = getenv("QIM_SHARD_TAKE_RETRY_MAX_MS")) {
    QIM_ASSIGN_OR_RETURN(int64_t ms, parse_ms("QIM_SHARD_TAKE_RETRY_MAX_MS", *v, 1, 86'400'000));
    o.retry_max = std::chrono::milliseconds(ms);
  }
  QIM_RETURN_IF_ERROR(validate(o));
  return o;
}

Result<std::unique_ptr<LeaseStore>> open_lease_store(const StoreOptions& store) {
  if (store.backend == "redis") {
    RedisLeaseOptions o;
    o.endpoints = store.redis_endpoints;
    o.key_prefix = store.redis_key_prefix;
    return open_redis_lease_store(o);
  }
  if (store.backend == "scylla" || store.backend == "scylla-lwt") {
#if defined(QIM_WITH_CQL_LEASES)
    CqlLeaseOptions o;
    o.hosts = store.cql_hosts;
    o.keyspace = store.cql_keyspace;
    o.replication_factor = store.cql_replication_factor;
    return open_cql_lease_store(o);
#else
    return Error(Errc::kConfig, "shard leases on CQL are not built into this binary (QIM_WITH_CQL=OFF)");
#endif
  }
  return Error(Errc::kConfig, "QIM_MAILBOX_STORE_BACKEND=" + store.backend +
                                  ": shard leases need a store every node shares (redis or scylla); set "
                                  "QIM_OWNED_SHARDS to the shards this node owns instead");
}

}  // namespace qim
