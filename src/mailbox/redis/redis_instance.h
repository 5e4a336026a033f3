#pragma once
// One Redis instance of the store: its connection pool and its script cache. Scripts are loaded once
// (SCRIPT LOAD at open) and called by SHA; an EVALSHA answered NOSCRIPT (the instance restarted or its
// script cache was flushed) loads the script again on that connection and is sent once more.

#include <array>
#include <span>
#include <string>
#include <vector>

#include "mailbox/op_counters.h"
#include "mailbox/redis/redis_pool.h"
#include "mailbox/redis/redis_scripts.h"

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

  // Loads every script; Transport/Timeout if the instance cannot be reached, Transport if it refuses.
  Status load_scripts();

  // Plain commands in one pipeline (one round trip). Replies may be error replies.
  Result<std::vector<RedisReply>> run(std::span<const RedisCommand> commands);
  // Script calls in one pipeline, reloading scripts answered NOSCRIPT. Replies may be error replies
  // (QIM_* refusals); Transport/Timeout if the instance cannot be reached.
  Result<std::vector<RedisReply>> eval(std::span<const ScriptCall> calls);

  const RedisEndpoint& endpoint() const { return pool_.endpoint(); }
  // The SHA1 Redis gave `script` at load.
  const std::string& sha(RedisScript script) const { return shas_[static_cast<size_t>(script)]; }

 private:
  Status load(RedisConnection& conn, RedisScript script);

  RedisPool pool_;
  OpCounters& counters_;
  std::array<std::string, kRedisScriptCount> shas_;  // written in load_scripts(), before any eval
};

// The reply itself, or the error it stands for (see redis_reply_error).
Result<RedisReply> reply_or_error(RedisReply reply, const RedisEndpoint& endpoint);

}  // namespace qim
