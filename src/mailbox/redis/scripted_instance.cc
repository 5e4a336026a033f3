#include "mailbox/redis/scripted_instance.h"

#include "mailbox/redis/redis_scripts.h"

namespace qim {

namespace {

RedisCommand evalsha(const std::string& sha, const IndexedScriptCall& call) {
  RedisCommand cmd;
  cmd.reserve(3 + call.keys.size() + call.args.size());
  cmd.push_back("EVALSHA");
  cmd.push_back(sha);
  cmd.push_back(std::to_string(call.keys.size()));
  cmd.insert(cmd.end(), call.keys.begin(), call.keys.end());
  cmd.insert(cmd.end(), call.args.begin(), call.args.end());
  return cmd;
}

bool is_noscript(const RedisReply& r) {
  return r.is_error() && r.str.starts_with("NOSCRIPT");
}

}  // namespace

Result<RedisReply> reply_or_error(RedisReply reply, const RedisEndpoint& endpoint) {
  if (reply.is_error()) return redis_reply_error(reply, endpoint);
  return reply;
}

ScriptedInstance::ScriptedInstance(RedisEndpoint endpoint, RedisTimeouts timeouts, uint32_t pool_size,
                                   OpCounters& counters, ScriptTable table)
    : pool_(std::move(endpoint), timeouts, pool_size),
      counters_(counters),
      table_(table),
      shas_(table.count) {}

void ScriptedInstance::count(size_t index) {
  if (table_.counts_as_lwt != nullptr && table_.counts_as_lwt(index)) {
    counters_.lwts++;
  } else {
    counters_.scripts++;
  }
}

Status ScriptedInstance::load(RedisConnection& conn, size_t index) {
  counters_.scripts++;
  const std::string name(table_.name(index));
  QIM_ASSIGN_OR_RETURN(RedisReply r, conn.run({"SCRIPT", "LOAD", std::string(table_.source(index))}));
  QIM_ASSIGN_OR_RETURN(r, reply_or_error(std::move(r), endpoint()));
  if (r.kind != RedisReply::Kind::kString) {
    return Error(Errc::kTransport,
                 "redis " + endpoint().to_string() + ": SCRIPT LOAD of " + name + " did not answer a SHA");
  }
  std::string& sha = shas_[index];
  if (sha.empty()) sha = r.str;
  if (sha != r.str) {
    return Error(Errc::kTransport, "redis " + endpoint().to_string() + ": script " + name + " loaded as " +
                                       r.str + ", expected " + sha);
  }
  return {};
}

Status ScriptedInstance::load_scripts() {
  QIM_ASSIGN_OR_RETURN(auto conn, pool_.acquire());
  for (size_t i = 0; i < table_.count; ++i) QIM_RETURN_IF_ERROR(load(*conn, i));
  return {};
}

Result<std::vector<RedisReply>> ScriptedInstance::run(std::span<const RedisCommand> commands) {
  QIM_ASSIGN_OR_RETURN(auto conn, pool_.acquire());
  return conn->pipeline(commands);
}

Result<std::vector<RedisReply>> ScriptedInstance::eval(std::span<const IndexedScriptCall> calls) {
  std::vector<RedisCommand> commands;
  commands.reserve(calls.size());
  for (const auto& call : calls) commands.push_back(evalsha(sha(call.script), call));
  QIM_ASSIGN_OR_RETURN(auto conn, pool_.acquire());
  for (const auto& call : calls) count(call.script);
  QIM_ASSIGN_OR_RETURN(auto replies, conn->pipeline(commands));

  // NOSCRIPT: the command did not run. Load what is missing and send just those again.
  std::vector<size_t> again;
  for (size_t i = 0; i < replies.size(); ++i) {
    if (is_noscript(replies[i])) again.push_back(i);
  }
  if (again.empty()) return replies;
  std::vector<bool> loaded(table_.count, false);
  std::vector<RedisCommand> retry;
  for (size_t i : again) {
    const size_t script = calls[i].script;
    if (!loaded[script]) QIM_RETURN_IF_ERROR(load(*conn, script));
    loaded[script] = true;
    count(script);
    retry.push_back(std::move(commands[i]));
  }
  QIM_ASSIGN_OR_RETURN(auto second, conn->pipeline(retry));
  for (size_t k = 0; k < again.size(); ++k) replies[again[k]] = std::move(second[k]);
  return replies;
}

}  // namespace qim
