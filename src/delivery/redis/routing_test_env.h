#pragma once
// What the routing tests share: the routing Redis under test (QIM_TEST_ROUTING_REDIS=host:port[,...]),
// a redis-server child a test may crash and restart, and three users of shard 0.
// Test-only (qim_delivery_redis_testing).

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/sharding.h"

namespace qim::testing {

inline constexpr std::string_view kTestRoutingRedisVariable = "QIM_TEST_ROUTING_REDIS";
inline constexpr std::string_view kTestRoutingRedisSkipMessage =
    "QIM_TEST_ROUTING_REDIS is not set: start Redis (scripts/engines/redis.sh start NAME PORT) and set "
    "QIM_TEST_ROUTING_REDIS=127.0.0.1:PORT to run the routing tests";

// The endpoints of QIM_TEST_ROUTING_REDIS, or empty when unset or blank.
std::vector<std::string> test_routing_endpoints();

// A throwaway redis-server child on a free loopback port, without persistence (a restart comes back
// empty, as a routing instance that lost its memory). Skips nothing itself: available() says whether
// redis-server is on PATH.
class ChildRedis {
 public:
  ChildRedis();
  ~ChildRedis();
  ChildRedis(const ChildRedis&) = delete;
  ChildRedis& operator=(const ChildRedis&) = delete;

  bool available() const { return !binary_.empty(); }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }
  // Starts it and waits until it answers PING (false if it does not within 10 s).
  bool start();
  // SIGKILL, and waits for the process to be gone.
  void crash();

 private:
  std::string binary_;
  int port_ = 0;
  std::filesystem::path dir_;
  int pid_ = -1;
};

// Three users of shard 0 of `shards` ("user<i>"): every message among them is one record of partition 0.
std::vector<UserId> users_of_shard_zero(const ShardMap& shards, size_t n);

}  // namespace qim::testing
