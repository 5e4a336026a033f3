#include "delivery/redis/routing_options.h"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <random>

namespace qim {

namespace {

Error config_error(const std::string& var, const std::string& value, const std::string& why) {
  return Error(Errc::kConfig, var + "='" + value + "': " + why);
}

std::vector<std::string> split_endpoints(const std::string& value) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string::npos) comma = value.size();
    std::string item = value.substr(start, comma - start);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (!item.empty()) out.push_back(item);
    start = comma + 1;
  }
  return out;
}

bool valid_gateway_id(const std::string& id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string default_gateway_id() {
  char host[64] = {0};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0')
    std::snprintf(host, sizeof host, "gateway");
  std::string h;
  for (const char* p = host; *p; ++p) h.push_back(valid_gateway_id(std::string(1, *p)) ? *p : '_');
  std::random_device random;
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "%08x", random());
  return h + "-" + std::to_string(::getpid()) + "-" + suffix;
}

Result<RoutingOptions> routing_options_from_env(const EnvLookup& getenv) {
  RoutingOptions o;
  if (auto v = getenv("QIM_ROUTING_REDIS")) {
    o.endpoints = split_endpoints(*v);
    if (o.endpoints.empty())
      return config_error("QIM_ROUTING_REDIS", *v, "expected host:port[,host:port...]");
    for (const auto& e : o.endpoints) {
      auto parsed = RedisEndpoint::parse(e);
      if (!parsed.ok()) return config_error("QIM_ROUTING_REDIS", *v, parsed.error().message());
    }
  }
  if (auto v = getenv("QIM_ROUTING_REDIS_PREFIX")) {
    if (v->empty() || v->size() > 64 || v->find_first_of(" \t\r\n{}*?[]") != std::string::npos) {
      return config_error("QIM_ROUTING_REDIS_PREFIX", *v,
                          "expected 1..64 characters without spaces, braces or glob characters");
    }
    o.key_prefix = *v;
  }
  if (auto v = getenv("QIM_GATEWAY_ID")) {
    if (!valid_gateway_id(*v))
      return config_error("QIM_GATEWAY_ID", *v, "expected 1..128 characters of [A-Za-z0-9._:-]");
    o.gateway_id = *v;
  }
  if (auto v = getenv("QIM_ROUTE_TTL_MS")) {
    int64_t ms = 0;
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), ms);
    if (ec != std::errc() || end != v->data() + v->size() || ms < 1000 || ms > 3'600'000)
      return config_error("QIM_ROUTE_TTL_MS", *v, "expected an integer in 1000..3600000 (milliseconds)");
    o.route_ttl = std::chrono::milliseconds(ms);
  }
  if (o.gateway_id.empty()) o.gateway_id = default_gateway_id();
  return o;
}

}  // namespace qim
