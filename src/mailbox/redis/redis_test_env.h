#pragma once
// What the tests of the Redis store share: the instances under test (QIM_TEST_REDIS=host:port[,...]),
// a key prefix of their own per test, and cleanup of that prefix only (never FLUSHALL a shared Redis).
// Test-only: linked into test binaries (qim_mailbox_redis_testing), never into the store.

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace qim {

inline constexpr std::string_view kTestRedisVariable = "QIM_TEST_REDIS";
inline constexpr std::string_view kTestRedisSkipMessage =
    "QIM_TEST_REDIS is not set: start Redis (scripts/engines/redis.sh start NAME PORT) and set "
    "QIM_TEST_REDIS=127.0.0.1:PORT[,127.0.0.1:PORT2] to run the Redis store tests";

// The endpoints of QIM_TEST_REDIS, or empty when it is unset or blank.
std::vector<std::string> test_redis_endpoints();

// "qimtest:<pid>:<name>:<random>:": no two tests share keys.
std::string unique_test_prefix(std::string_view name);

// A loopback TCP port nothing listens on right now (bound to port 0, then released).
int unused_loopback_port();

// Deletes every key starting with `prefix` on every endpoint (SCAN MATCH, then DEL).
Status delete_test_prefix(const std::vector<std::string>& endpoints, const std::string& prefix);

}  // namespace qim
