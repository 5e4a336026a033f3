#pragma once
// One Redis instance as the inbox uses it: a ScriptedInstance (mailbox/redis/scripted_instance.h: pool,
// SCRIPT LOAD at open, NOSCRIPT reload, as the mailbox store's) over the inbox's scripts.

#include <span>
#include <string>
#include <vector>

#include "inbox/redis/redis_inbox_scripts.h"
#include "mailbox/op_counters.h"
#include "mailbox/redis/redis_pool.h"
#include "mailbox/redis/scripted_instance.h"

namespace qim {

struct InboxScriptCall {
  InboxScript script;
  std::vector<std::string> keys;
  std::vector<std::string> args;
};

class RedisInboxInstance {
 public:
  // Every EVALSHA and SCRIPT LOAD is counted in counters.scripts; plain commands (run) are counted by the
  // caller, who knows what they mean.
  RedisInboxInstance(RedisEndpoint endpoint, RedisTimeouts timeouts, uint32_t pool_size,
                     OpCounters& counters);

  // As ScriptedInstance's.
  Status load_scripts() { return scripted_.load_scripts(); }
  Result<std::vector<RedisReply>> run(std::span<const RedisCommand> commands) {
    return scripted_.run(commands);
  }
  Result<std::vector<RedisReply>> eval(std::span<const InboxScriptCall> calls);

  const RedisEndpoint& endpoint() const { return scripted_.endpoint(); }

 private:
  ScriptedInstance scripted_;
};

}  // namespace qim
