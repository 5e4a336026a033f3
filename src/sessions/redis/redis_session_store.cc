#include "sessions/redis/redis_session_store.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <map>
#include <set>

namespace qim {

namespace {

constexpr size_t kRevocationsKept = 10'000;
constexpr int64_t kDevicesTtlSeconds = 30 * 86'400;

// KEYS[1] the revoked hash, ARGV[1] the field, ARGV[2] the not_before: raised only.
constexpr const char* kRaiseScript = R"(
local c = redis.call('HGET', KEYS[1], ARGV[1])
if (not c) or tonumber(c) < tonumber(ARGV[2]) then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return 1)";

// KEYS[1] the counter, KEYS[2] the log, ARGV[1] the user, ARGV[2] how many to keep.
constexpr const char* kAnnounceScript = R"(
local n = redis.call('INCR', KEYS[1])
redis.call('ZADD', KEYS[2], n, ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -tonumber(ARGV[2]) - 1)
return n)";

Status reply_error(const RedisReply& r, std::string_view what) {
  if (r.is_error()) return Error(Errc::kTransport, std::string(what) + ": " + r.str);
  return {};
}

std::optional<int64_t> number(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

Result<std::unique_ptr<RedisSessionStore>> RedisSessionStore::create(const RoutingOptions& options) {
  QIM_ASSIGN_OR_RETURN(auto redis, RoutingRedis::create(options));
  RoutingRedis& ref = *redis;
  auto store = std::make_unique<RedisSessionStore>(ref, std::string());
  store->owned_ = std::move(redis);
  return store;
}

std::string RedisSessionStore::key(std::string_view what, const UserId& user) const {
  return redis_.keys().prefix + std::string(what) + ":" + user.str();
}

Result<RevocationMarks> RedisSessionStore::marks(const UserId& user) {
  const RedisCommand cmd{"HGETALL", key("revoked", user)};
  QIM_ASSIGN_OR_RETURN(auto replies, redis_.run(redis_.instance_of_user(user), {&cmd, 1}));
  const RedisReply& r = replies[0];
  QIM_RETURN_IF_ERROR(reply_error(r, "reading the revocations of " + user.str()));
  RevocationMarks marks;
  for (size_t i = 0; i + 1 < r.elements.size(); i += 2) {
    const std::string& field = r.elements[i].str;
    auto nb = number(r.elements[i + 1].str);
    if (!nb) continue;
    if (field == "*") {
      marks.raise(std::nullopt, *nb);
    } else if (field.starts_with("d:")) {
      marks.raise(DeviceId::unchecked(field.substr(2)), *nb);
    }
  }
  return marks;
}

Status RedisSessionStore::revoke(const UserId& user, const std::optional<DeviceId>& device,
                                 int64_t not_before_ms) {
  if (not_before_ms < 0) return Error(Errc::kInvalidArgument, "not_before must not be negative");
  // The mark first: from then on AUTH refuses the tokens; the announcement lets the watchers catch up.
  const RedisCommand raise{"EVAL",
                           kRaiseScript,
                           "1",
                           key("revoked", user),
                           device ? "d:" + device->str() : std::string("*"),
                           std::to_string(not_before_ms)};
  QIM_ASSIGN_OR_RETURN(auto r1, redis_.run(redis_.instance_of_user(user), {&raise, 1}));
  QIM_RETURN_IF_ERROR(reply_error(r1[0], "recording the revocation of " + user.str()));
  const std::string& p = redis_.keys().prefix;
  const RedisCommand announce{"EVAL",
                              kAnnounceScript,
                              "2",
                              p + "revocations:seq",
                              p + "revocations",
                              user.str(),
                              std::to_string(kRevocationsKept)};
  QIM_ASSIGN_OR_RETURN(auto r2, redis_.run(0, {&announce, 1}));
  return reply_error(r2[0], "announcing the revocation of " + user.str());
}

Result<RevocationChanges> RedisSessionStore::changes_since(std::optional<uint64_t> cursor) {
  const std::string& p = redis_.keys().prefix;
  std::vector<RedisCommand> cmds{{"GET", p + "revocations:seq"}};
  if (cursor)
    cmds.push_back({"ZRANGEBYSCORE", p + "revocations", "(" + std::to_string(*cursor), "+inf", "WITHSCORES"});
  QIM_ASSIGN_OR_RETURN(auto replies, redis_.run(0, cmds));
  for (const auto& r : replies) QIM_RETURN_IF_ERROR(reply_error(r, "reading the revocations log"));
  RevocationChanges out;
  out.cursor = replies[0].is_nil() ? 0 : static_cast<uint64_t>(number(replies[0].str).value_or(0));
  if (!cursor) return out;
  // A counter behind the cursor: the instance restarted (or was flushed) and forgot what came before.
  if (out.cursor < *cursor) out.complete = false;
  const auto& elements = replies[1].elements;
  for (size_t i = 0; i + 1 < elements.size(); i += 2) {
    auto u = UserId::parse(elements[i].str);
    auto seq = number(elements[i + 1].str);
    if (!u.ok() || !seq) continue;
    out.users.push_back(std::move(u).value());
  }
  // A user revoked again keeps only its last seq (a gap in the seqs is no loss); but with more revocations
  // since the cursor than the log keeps, the ones trimmed are unknown.
  if (out.cursor > *cursor && out.cursor - *cursor > kRevocationsKept) out.complete = false;
  return out;
}

void RedisSessionStore::connection_opened(const UserId& user, const DeviceId& device, int64_t at_ms) {
  const std::vector<RedisCommand> cmds{
      {"HSET", key("devices", user), device.str(), std::to_string(at_ms)},
      {"EXPIRE", key("devices", user), std::to_string(kDevicesTtlSeconds)},
      {"HINCRBY", key("live", user), gateway_id_ + "|" + device.str(), "1"},
  };
  auto r = redis_.run(redis_.instance_of_user(user), cmds);
  if (!r.ok())
    spdlog::warn("sessions: the AUTH of {}/{} not recorded: {}", user.str(), device.str(),
                 r.error().to_string());
}

void RedisSessionStore::connection_closed(const UserId& user, const DeviceId& device) {
  const RedisCommand cmd{"HINCRBY", key("live", user), gateway_id_ + "|" + device.str(), "-1"};
  auto r = redis_.run(redis_.instance_of_user(user), {&cmd, 1});
  if (!r.ok())
    spdlog::warn("sessions: the close of {}/{} not recorded: {}", user.str(), device.str(),
                 r.error().to_string());
}

Result<std::vector<DeviceSession>> RedisSessionStore::devices(const UserId& user) {
  const std::vector<RedisCommand> cmds{
      {"HGETALL", key("devices", user)},
      {"HGETALL", key("live", user)},
      {"ZRANGEBYSCORE", redis_.keys().gateways(), std::to_string(routing_now_ms()), "+inf"},
  };
  QIM_ASSIGN_OR_RETURN(auto replies, redis_.run(redis_.instance_of_user(user), cmds));
  for (const auto& r : replies) QIM_RETURN_IF_ERROR(reply_error(r, "reading the devices of " + user.str()));
  QIM_ASSIGN_OR_RETURN(RevocationMarks m, marks(user));
  std::set<std::string> live_gateways;
  for (const auto& g : replies[2].elements) live_gateways.insert(g.str);
  std::map<std::string, DeviceSession> by_device;
  for (size_t i = 0; i + 1 < replies[0].elements.size(); i += 2) {
    DeviceSession& d = by_device[replies[0].elements[i].str];
    d.last_auth_ms = number(replies[0].elements[i + 1].str).value_or(0);
  }
  for (size_t i = 0; i + 1 < replies[1].elements.size(); i += 2) {
    const std::string& field = replies[1].elements[i].str;
    const size_t bar = field.rfind('|');
    if (bar == std::string::npos || !live_gateways.contains(field.substr(0, bar))) continue;
    const int64_t n = number(replies[1].elements[i + 1].str).value_or(0);
    if (n > 0) by_device[field.substr(bar + 1)].live += static_cast<uint32_t>(n);
  }
  for (const auto& [device, nb] : m.device_not_before_ms) by_device[device];
  std::vector<DeviceSession> out;
  for (auto& [device, s] : by_device) {
    s.device = device;
    s.not_before_ms = m.not_before(DeviceId::unchecked(device));
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace qim
