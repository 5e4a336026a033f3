#pragma once
// One Redis instance as the inbox uses it: a ScriptedInstance (mailbox/redis/scripted_instance.h: pool,
// SCRIPT LOAD at open, NOSCRIPT reload, as the mailbox store's) over the inbox's scripts.

#include <atomic>
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
  // caller, who knows what they mean. Every run and eval (one pipeline) counts one in `round_trips` (a
  // NOSCRIPT reload's extra ones are not counted: rare, and not what a caller's batching decides).
  RedisInboxInstance(RedisEndpoint endpoint, RedisTimeouts timeouts, uint32_t pool_size, OpCounters& counters,
                     std::atomic<uint64_t>& round_trips);

  // As ScriptedInstance's.
  Status load_scripts() { return scripted_.load_scripts(); }
  Result<std::vector<RedisReply>> run(std::span<const RedisCommand> commands) {
    round_trips_++;
    return scripted_.run(commands);
  }
  Result<std::vector<RedisReply>> eval(std::span<const InboxScriptCall> calls);

  const RedisEndpoint& endpoint() const { return scripted_.endpoint(); }

 private:
  ScriptedInstance scripted_;
  std::atomic<uint64_t>& round_trips_;
};

}  // namespace qim
