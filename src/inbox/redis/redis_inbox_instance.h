#pragma once
// One Redis instance as the inbox uses it: a connection pool and the inbox's script cache. Scripts are
// loaded once (SCRIPT LOAD at open) and called by SHA; a call answered NOSCRIPT (the instance restarted or
// its script cache was flushed) loads the script again on that connection and is sent once more, as the
// mailbox store does (mailbox/redis/redis_instance.h).

#include <array>
#include <span>
#include <string>
#include <vector>

#include "inbox/redis/redis_inbox_scripts.h"
#include "mailbox/op_counters.h"
#include "mailbox/redis/redis_pool.h"

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

  // Loads every script; Transport/Timeout if the instance cannot be reached, Transport if it refuses.
  Status load_scripts();
  // Plain commands in one pipeline (one round trip). Replies may be error replies.
  Result<std::vector<RedisReply>> run(std::span<const RedisCommand> commands);
  // Script calls in one pipeline, reloading scripts answered NOSCRIPT. Replies may be error replies.
  Result<std::vector<RedisReply>> eval(std::span<const InboxScriptCall> calls);

  const RedisEndpoint& endpoint() const { return pool_.endpoint(); }

 private:
  Status load(RedisConnection& conn, InboxScript script);

  RedisPool pool_;
  OpCounters& counters_;
  std::array<std::string, kInboxScriptCount> shas_;  // written in load_scripts(), before any eval
};

}  // namespace qim
