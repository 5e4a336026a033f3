#pragma once
// Shard leases in Redis (the redis deployment): on the first instance of QIM_MAILBOX_REDIS, under the
// mailbox key prefix (QIM_MAILBOX_REDIS_PREFIX), keys `<prefix>lease:epoch:<shard>` (the highest epoch
// granted, no expiry), `<prefix>lease:owner:<shard>` (the holder's node id, PX ttl: Redis expires it) and
// `<prefix>lease:nodes` (a sorted set: node id -> heartbeat expiry on the Redis clock). Every
// compare-and-set is one Lua script (EVAL), so it is atomic; the TTLs are counted by Redis.
//
// All leases live on that one instance: while it is down no lease can be renewed, and every node stops
// writing its shards within its lease (fail closed), even those whose entries live on other instances.

#include <memory>
#include <string>
#include <vector>

#include "node/lease/lease_store.h"

namespace qim {

struct RedisLeaseOptions {
  std::vector<std::string> endpoints;  // QIM_MAILBOX_REDIS; the leases use endpoints[0]
  std::string key_prefix = "qim:";     // QIM_MAILBOX_REDIS_PREFIX
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds command_timeout{2000};
};

// Connects (one PING). Config for no or a malformed endpoint; Transport/Timeout if Redis cannot be reached.
Result<std::unique_ptr<LeaseStore>> open_redis_lease_store(const RedisLeaseOptions& options);

}  // namespace qim
