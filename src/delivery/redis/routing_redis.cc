#include "delivery/redis/routing_redis.h"

#include <xxhash.h>

#include <chrono>

#include "core/sharding.h"

namespace qim {

Result<std::unique_ptr<RoutingRedis>> RoutingRedis::create(const RoutingOptions& options,
                                                           uint32_t pool_size) {
  if (options.endpoints.empty()) return Error(Errc::kConfig, "QIM_ROUTING_REDIS: no routing instance given");
  std::vector<std::unique_ptr<RedisPool>> pools;
  for (const auto& text : options.endpoints) {
    auto endpoint = RedisEndpoint::parse(text);
    if (!endpoint.ok()) return Error(Errc::kConfig, "QIM_ROUTING_REDIS: " + endpoint.error().message());
    pools.push_back(std::make_unique<RedisPool>(*endpoint, options.timeouts, pool_size));
  }
  return std::unique_ptr<RoutingRedis>(new RoutingRedis(options, std::move(pools)));
}

size_t RoutingRedis::instance_of_user(const UserId& user) const {
  return user_hash(user) % pools_.size();
}

size_t RoutingRedis::instance_of_gateway(std::string_view gateway_id) const {
  return XXH3_64bits(gateway_id.data(), gateway_id.size()) % pools_.size();
}

Result<std::vector<RedisReply>> RoutingRedis::run(size_t instance, std::span<const RedisCommand> commands) {
  QIM_ASSIGN_OR_RETURN(auto lease, pools_[instance]->acquire());
  return lease->pipeline(commands);
}

int64_t routing_now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace qim
