#include "app/engine_hint.h"

#include <string>
#include <vector>

namespace qim {

namespace {

struct Engine {
  const char* variable;
  const char* unset;  // what an unset variable means
  bool used;
  std::vector<std::string> words;  // what a message about this engine mentions
};

bool mentions(const std::string& message, const std::string& word) {
  return !word.empty() && message.find(word) != std::string::npos;
}

}  // namespace

Error with_engine_hint(const Error& e, const EnvLookup& env) {
  if (e.code() != Errc::kTransport && e.code() != Errc::kTimeout) return e;
  auto value = [&](const char* name) { return env(name).value_or(""); };
  const std::string store = env("QIM_MAILBOX_STORE_BACKEND").value_or("embedded");
  const std::string log = env("QIM_LOG_BACKEND").value_or("embedded");
  std::vector<Engine> engines = {
      {"QIM_MAILBOX_REDIS", "the default 127.0.0.1:6379", store == "redis", {"redis"}},
      {"QIM_ROUTING_REDIS", "no routing Redis", !value("QIM_ROUTING_REDIS").empty(), {"routing"}},
      {"QIM_CQL_HOSTS",
       "the default 127.0.0.1",
       store == "scylla" || store == "scylla-lwt",
       {"CQL", "cql", "scylla"}},
      {"QIM_KAFKA_BROKERS", "the default 127.0.0.1:19092", log == "kafka", {"kafka", "Kafka", "broker"}},
  };
  const std::string& m = e.message();
  std::vector<const Engine*> named;
  for (const Engine& x : engines) {
    bool hit = false;
    for (const std::string& w : x.words) hit = hit || mentions(m, w);
    // The address itself in the message (each of a comma-separated list).
    std::string v = value(x.variable);
    for (size_t start = 0; start <= v.size() && !v.empty();) {
      size_t comma = v.find(',', start);
      hit =
          hit || mentions(m, v.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (hit && (x.used || !value(x.variable).empty())) named.push_back(&x);
  }
  if (named.empty())
    for (const Engine& x : engines)
      if (x.used) named.push_back(&x);
  if (named.empty()) return e;
  std::string hint = m + "; is the engine running? check";
  for (size_t i = 0; i < named.size(); ++i) {
    const std::string v = value(named[i]->variable);
    hint += std::string(i == 0 ? " " : ", ") + named[i]->variable +
            (v.empty() ? std::string(" (unset: ") + named[i]->unset + ")" : " (now '" + v + "')");
  }
  return Error(e.code(), hint);
}

}  // namespace qim
