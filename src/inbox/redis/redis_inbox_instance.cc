#include "inbox/redis/redis_inbox_instance.h"

namespace qim {

namespace {

ScriptTable inbox_scripts() {
  ScriptTable t;
  t.count = kInboxScriptCount;
  t.name = [](size_t i) { return inbox_script_name(static_cast<InboxScript>(i)); };
  t.source = [](size_t i) { return inbox_script_source(static_cast<InboxScript>(i)); };
  return t;  // no compare-and-set counted as an LWT: every call is a script
}

}  // namespace

RedisInboxInstance::RedisInboxInstance(RedisEndpoint endpoint, RedisTimeouts timeouts, uint32_t pool_size,
                                       OpCounters& counters, std::atomic<uint64_t>& round_trips)
    : scripted_(std::move(endpoint), timeouts, pool_size, counters, inbox_scripts()),
      round_trips_(round_trips) {}

Result<std::vector<RedisReply>> RedisInboxInstance::eval(std::span<const InboxScriptCall> calls) {
  round_trips_++;
  std::vector<IndexedScriptCall> indexed;
  indexed.reserve(calls.size());
  for (const auto& c : calls) indexed.push_back({static_cast<size_t>(c.script), c.keys, c.args});
  return scripted_.eval(indexed);
}

}  // namespace qim
