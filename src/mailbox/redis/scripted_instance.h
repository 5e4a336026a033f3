#pragma once
// One Redis instance with a table of Lua scripts: a connection pool and the scripts' SHAs. Scripts are
// loaded once (SCRIPT LOAD at open) and called by SHA; an EVALSHA answered NOSCRIPT (the instance
// restarted or its script cache was flushed) loads that script again on the same connection and is sent
// once more. The mailbox store (redis_instance.h) and the inbox (inbox/redis/redis_inbox_instance.h) each
// wrap one with their own script enum; the loading and reloading rules live here once.
//
// Thread-safe after load_scripts() returned OK (the SHAs are written there, read-only afterwards).

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mailbox/op_counters.h"
#include "mailbox/redis/redis_pool.h"

namespace qim {

// The scripts of one user of an instance, addressed by index in [0, count).
struct ScriptTable {
  size_t count = 0;
  std::string_view (*name)(size_t index) = nullptr;
  std::string_view (*source)(size_t index) = nullptr;
  // True for compare-and-set scripts, counted as LWTs; other calls are counted as scripts.
  bool (*counts_as_lwt)(size_t index) = nullptr;
};

// A call of script `script` (an index of the table) with its keys and arguments (borrowed).
struct IndexedScriptCall {
  size_t script = 0;
  std::span<const std::string> keys;
  std::span<const std::string> args;
};

class ScriptedInstance {
 public:
  // counters: every EVALSHA and SCRIPT LOAD sent here is counted there once; plain commands (run) are
  // counted by the caller, who knows what they mean.
  ScriptedInstance(RedisEndpoint endpoint, RedisTimeouts timeouts, uint32_t pool_size, OpCounters& counters,
                   ScriptTable table);

  // Loads every script; Transport/Timeout if the instance cannot be reached, Transport if it refuses or
  // gives a script a SHA other than the one it gave before.
  Status load_scripts();
  // Plain commands in one pipeline (one round trip). Replies may be error replies.
  Result<std::vector<RedisReply>> run(std::span<const RedisCommand> commands);
  // Script calls in one pipeline, reloading scripts answered NOSCRIPT and sending just those again (the
  // others already ran; callers' calls each touch their own keys, so their order does not matter). Replies
  // may be error replies (QIM_* refusals); Transport/Timeout if the instance cannot be reached.
  Result<std::vector<RedisReply>> eval(std::span<const IndexedScriptCall> calls);

  const RedisEndpoint& endpoint() const { return pool_.endpoint(); }
  // The SHA1 Redis gave script `index` at load.
  const std::string& sha(size_t index) const { return shas_[index]; }

 private:
  Status load(RedisConnection& conn, size_t index);
  void count(size_t index);

  RedisPool pool_;
  OpCounters& counters_;
  ScriptTable table_;
  std::vector<std::string> shas_;  // table_.count of them, written in load_scripts(), before any eval
};

// The reply itself, or the error it stands for (see redis_reply_error).
Result<RedisReply> reply_or_error(RedisReply reply, const RedisEndpoint& endpoint);

}  // namespace qim
