#pragma once
// The Redis mailbox backend (ADR-0015, the seed's control configuration): several Redis instances
// addressed directly, shard s on instance s mod N and each user's keys on the instance of the user's
// shard. The shard's 64 lane watermarks are one packed value committed by one Lua call per finished
// record; dispatch identity is first-writer-wins inside one Lua call; entries are idempotent upserts in
// a per-user sorted set. Key layout: redis_keys.h. Scripts: redis_scripts.h. Notes: docs/redis-store.md.
//
// Durability is Redis's: the frontier is acknowledged once Redis applied the script, so only an instance
// with appendonly yes + appendfsync always keeps every acknowledged advance across a crash.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "mailbox/store_backend.h"

namespace qim {

struct RedisStoreOptions {
  std::vector<std::string> endpoints;  // "host:port" each; shard s lives on endpoints[s mod N]
  std::string key_prefix = "qim:";     // every key starts with it: one namespace per deployment or test
  uint32_t pool_size = 4;              // connections per instance at most
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds command_timeout{2000};  // also the longest wait for a free connection
};

// Opens the store over `options.endpoints` and loads its scripts on every instance. Config for a
// malformed endpoint or an empty list; Transport or Timeout naming the instance that cannot be reached.
Result<std::unique_ptr<StoreBackend>> open_redis_backend(const BackendContext& context,
                                                         const RedisStoreOptions& options);

// The factory's entry point (QIM_MAILBOX_REDIS): default prefix, pool and timeouts.
Result<std::unique_ptr<StoreBackend>> open_redis_backend(const BackendContext& context,
                                                         const std::vector<std::string>& endpoints);

// The same with every key under `key_prefix`, so a test gets a keyspace of its own on a shared Redis.
Result<std::unique_ptr<StoreBackend>> open_redis_backend_with_prefix(
    const BackendContext& context, const std::vector<std::string>& endpoints, const std::string& key_prefix);

}  // namespace qim
