#pragma once
// The routing Redis instances as one object: a small connection pool per instance, and which instance
// holds what (a user's routes: by hash of the user; a gateway's channel: by hash of the gateway id; the
// gateway registry: on every instance). Thread-safe (the pools are).

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "delivery/redis/routing_options.h"
#include "mailbox/redis/redis_pool.h"

namespace qim {

class RoutingRedis {
 public:
  // Config error for an endpoint that is not host:port or an empty list. Connects lazily (on first use).
  static Result<std::unique_ptr<RoutingRedis>> create(const RoutingOptions& options, uint32_t pool_size = 2);

  size_t size() const { return pools_.size(); }
  size_t instance_of_user(const UserId& user) const;
  size_t instance_of_gateway(std::string_view gateway_id) const;
  const RedisEndpoint& endpoint(size_t instance) const { return pools_[instance]->endpoint(); }
  const RoutingKeys& keys() const { return keys_; }
  const RoutingOptions& options() const { return options_; }

  // The commands in one pipeline on `instance` (one round trip). Replies may be error replies; Transport
  // or Timeout when the instance cannot be reached (the connection is dropped, the next call reconnects).
  Result<std::vector<RedisReply>> run(size_t instance, std::span<const RedisCommand> commands);

 private:
  RoutingRedis(RoutingOptions options, std::vector<std::unique_ptr<RedisPool>> pools)
      : options_(std::move(options)), keys_{options_.key_prefix}, pools_(std::move(pools)) {}

  const RoutingOptions options_;
  const RoutingKeys keys_;
  std::vector<std::unique_ptr<RedisPool>> pools_;
};

// Now, in milliseconds since the epoch: route expiries are wall-clock (they are compared in Redis by
// every process of the deployment).
int64_t routing_now_ms();

}  // namespace qim
