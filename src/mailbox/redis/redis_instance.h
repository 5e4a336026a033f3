#pragma once
// One Redis instance of the store: a ScriptedInstance (scripted_instance.h: pool, SCRIPT LOAD at open,
// NOSCRIPT reload) over the store's scripts (redis_scripts.h).

#include <span>
#include <string>
#include <vector>

#include "mailbox/op_counters.h"
#include "mailbox/redis/redis_pool.h"
#include "mailbox/redis/redis_scripts.h"
#include "mailbox/redis/scripted_instance.h"

namespace qim {

struct ScriptCall {
  RedisScript script;
  std::vector<std::string> keys;
  std::vector<std::string> args;
};

class RedisInstance {
 public:
  // counters: every command this class sends is counted there, once, by kind: EVALSHA of a
  // compare-and-set script (script_is_cas) as an LWT, any other EVALSHA and SCRIPT LOAD as a script.
  // Plain commands sent with run() are counted by the caller, who knows what they mean.
  RedisInstance(RedisEndpoint endpoint, RedisTimeouts timeouts, uint32_t pool_size, OpCounters& counters);

  // As ScriptedInstance's.
  Status load_scripts() { return scripted_.load_scripts(); }
  Result<std::vector<RedisReply>> run(std::span<const RedisCommand> commands) {
    return scripted_.run(commands);
  }
  Result<std::vector<RedisReply>> eval(std::span<const ScriptCall> calls);

  const RedisEndpoint& endpoint() const { return scripted_.endpoint(); }
  // The SHA1 Redis gave `script` at load.
  const std::string& sha(RedisScript script) const { return scripted_.sha(static_cast<size_t>(script)); }

 private:
  ScriptedInstance scripted_;
};

}  // namespace qim
