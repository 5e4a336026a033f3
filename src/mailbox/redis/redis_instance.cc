#include "mailbox/redis/redis_instance.h"

namespace qim {

namespace {

ScriptTable store_scripts() {
  ScriptTable t;
  t.count = kRedisScriptCount;
  t.name = [](size_t i) { return script_name(static_cast<RedisScript>(i)); };
  t.source = [](size_t i) { return script_source(static_cast<RedisScript>(i)); };
  t.counts_as_lwt = [](size_t i) { return script_is_cas(static_cast<RedisScript>(i)); };
  return t;
}

}  // namespace

RedisInstance::RedisInstance(RedisEndpoint endpoint, RedisTimeouts timeouts, uint32_t pool_size,
                             OpCounters& counters)
    : scripted_(std::move(endpoint), timeouts, pool_size, counters, store_scripts()) {}

Result<std::vector<RedisReply>> RedisInstance::eval(std::span<const ScriptCall> calls) {
  std::vector<IndexedScriptCall> indexed;
  indexed.reserve(calls.size());
  for (const auto& c : calls) indexed.push_back({static_cast<size_t>(c.script), c.keys, c.args});
  return scripted_.eval(indexed);
}

}  // namespace qim
