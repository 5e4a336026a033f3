#pragma once
// Where live connections are routed across gateways (docs/architecture.md "Routing across gateways"): the
// routing Redis instances, this gateway's id, and how long a route lives without a refresh.
//
//   QIM_ROUTING_REDIS         127.0.0.1:16381   routing instances, comma-separated host:port
//   QIM_ROUTING_REDIS_PREFIX  qim:              key and channel namespace (one per deployment)
//   QIM_GATEWAY_ID            <host>-<pid>-<random>   this gateway's id (unique per process by default)
//   QIM_ROUTE_TTL_MS          30000             a route (and a gateway's liveness) lasts this long
//   unrefreshed
//
// Keys, on the instance chosen by hashing the user (routes) or the gateway id (its channel):
//   <prefix>route:<user>      sorted set: gateway id -> expiry (ms since the epoch); key TTL = route TTL
//   <prefix>gateways          sorted set on EVERY instance: live gateway id -> expiry
//   <prefix>gw:<gateway id>   the gateway's pub/sub channel (frontier moves that concern its users)
//   <prefix>send:<sender>\0<client_msg_id>   the SEND idempotency entry (see redis_send_dedup.h)
//   <prefix>attach:<day>:<user>   hash: a user's daily upload budget
//   (attachments/redis/redis_upload_budget.h)

#include <chrono>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/status.h"
#include "mailbox/redis/redis_connection.h"
#include "mailbox/store_options.h"

namespace qim {

struct RoutingOptions {
  std::vector<std::string> endpoints = {"127.0.0.1:16381"};  // QIM_ROUTING_REDIS
  std::string key_prefix = "qim:";                           // QIM_ROUTING_REDIS_PREFIX
  std::string gateway_id;                                    // QIM_GATEWAY_ID; empty: default_gateway_id()
  std::chrono::milliseconds route_ttl{30'000};               // QIM_ROUTE_TTL_MS
  RedisTimeouts timeouts{std::chrono::milliseconds(500), std::chrono::milliseconds(1000)};
};

// Reads the variables above (unset keeps the default). Config error naming the variable for a bad value:
// an endpoint that is not host:port, an empty list, a TTL outside 1000..3600000 ms, a gateway id with
// characters outside [A-Za-z0-9._:-] or over 128 bytes.
Result<RoutingOptions> routing_options_from_env(const EnvLookup& getenv);

// "<host>-<pid>-<random hex>": unique per process, readable in logs.
std::string default_gateway_id();

// The key and channel names (prefix included).
struct RoutingKeys {
  std::string prefix;
  std::string route(const UserId& user) const { return prefix + "route:" + user.str(); }
  std::string gateways() const { return prefix + "gateways"; }
  std::string channel(std::string_view gateway_id) const { return prefix + "gw:" + std::string(gateway_id); }
  std::string send(std::string_view dedup_key) const { return prefix + "send:" + std::string(dedup_key); }
};

}  // namespace qim
