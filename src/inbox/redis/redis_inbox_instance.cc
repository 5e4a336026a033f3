#include "inbox/redis/redis_inbox_instance.h"

#include "mailbox/redis/redis_instance.h"

namespace qim {

namespace {

RedisCommand evalsha(const std::string& sha, const InboxScriptCall& call) {
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

RedisInboxInstance::RedisInboxInstance(RedisEndpoint endpoint, RedisTimeouts timeouts, uint32_t pool_size,
                                       OpCounters& counters)
    : pool_(std::move(endpoint), timeouts, pool_size), counters_(counters) {}

Status RedisInboxInstance::load(RedisConnection& conn, InboxScript script) {
  counters_.scripts++;
  QIM_ASSIGN_OR_RETURN(RedisReply r, conn.run({"SCRIPT", "LOAD", std::string(inbox_script_source(script))}));
  QIM_ASSIGN_OR_RETURN(r, reply_or_error(std::move(r), endpoint()));
  if (r.kind != RedisReply::Kind::kString) {
    return Error(Errc::kTransport, "redis " + endpoint().to_string() + ": SCRIPT LOAD of " +
                                       std::string(inbox_script_name(script)) + " did not answer a SHA");
  }
  std::string& sha = shas_[static_cast<size_t>(script)];
  if (sha.empty()) sha = r.str;
  if (sha != r.str) {
    return Error(Errc::kTransport, "redis " + endpoint().to_string() + ": script " +
                                       std::string(inbox_script_name(script)) + " loaded as " + r.str +
                                       ", expected " + sha);
  }
  return {};
}

Status RedisInboxInstance::load_scripts() {
  QIM_ASSIGN_OR_RETURN(auto conn, pool_.acquire());
  for (size_t i = 0; i < kInboxScriptCount; ++i)
    QIM_RETURN_IF_ERROR(load(*conn, static_cast<InboxScript>(i)));
  return {};
}

Result<std::vector<RedisReply>> RedisInboxInstance::run(std::span<const RedisCommand> commands) {
  QIM_ASSIGN_OR_RETURN(auto conn, pool_.acquire());
  return conn->pipeline(commands);
}

Result<std::vector<RedisReply>> RedisInboxInstance::eval(std::span<const InboxScriptCall> calls) {
  std::vector<RedisCommand> commands;
  commands.reserve(calls.size());
  for (const auto& call : calls) commands.push_back(evalsha(shas_[static_cast<size_t>(call.script)], call));
  QIM_ASSIGN_OR_RETURN(auto conn, pool_.acquire());
  counters_.scripts += calls.size();
  QIM_ASSIGN_OR_RETURN(auto replies, conn->pipeline(commands));

  // NOSCRIPT: that command did not run. Load what is missing and send just those again; the others ran,
  // and order between them does not matter (each is an idempotent upsert or a read).
  std::vector<size_t> again;
  for (size_t i = 0; i < replies.size(); ++i) {
    if (is_noscript(replies[i])) again.push_back(i);
  }
  if (again.empty()) return replies;
  std::array<bool, kInboxScriptCount> loaded{};
  std::vector<RedisCommand> retry;
  for (size_t i : again) {
    auto& done = loaded[static_cast<size_t>(calls[i].script)];
    if (!done) QIM_RETURN_IF_ERROR(load(*conn, calls[i].script));
    done = true;
    counters_.scripts++;
    retry.push_back(std::move(commands[i]));
  }
  QIM_ASSIGN_OR_RETURN(auto second, conn->pipeline(retry));
  for (size_t k = 0; k < again.size(); ++k) replies[again[k]] = std::move(second[k]);
  return replies;
}

}  // namespace qim
