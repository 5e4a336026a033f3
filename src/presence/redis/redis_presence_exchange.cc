#include "presence/redis/redis_presence_exchange.h"

#include <spdlog/spdlog.h>

#include <charconv>

#include "core/thread_name.h"

namespace qim {

namespace {

constexpr int64_t kInfoTtlMs = 30LL * 24 * 3600 * 1000;  // last seen is kept a month
constexpr auto kBackoff = std::chrono::milliseconds(200);

// went_online: this gateway holds the user; "online" is published only if no other live gateway did.
constexpr const char* kOnlineScript = R"(
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
local before = redis.call('ZCARD', KEYS[1])
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('HSET', KEYS[2], 'privacy', ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[7])
if before == 0 then
  local seen = redis.call('HGET', KEYS[2], 'seen') or '-'
  redis.call('PUBLISH', ARGV[5], 't ' .. ARGV[6] .. ' 1 ' .. seen)
  return 1
end
return 0
)";

// went_offline: this gateway no longer holds the user; "offline" (and last seen) only if none does.
constexpr const char* kOfflineScript = R"(
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
redis.call('HSET', KEYS[2], 'privacy', ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
if redis.call('ZCARD', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[2], 'seen', ARGV[5])
  redis.call('PUBLISH', ARGV[3], 't ' .. ARGV[4] .. ' 0 ' .. ARGV[5])
  return 1
end
return 0
)";

// privacy_changed: the new setting and the current state, published as a privacy change.
constexpr const char* kPrivacyScript = R"(
redis.call('HSET', KEYS[2], 'privacy', ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
local online = redis.call('ZCOUNT', KEYS[1], ARGV[1], '+inf') > 0
local seen = redis.call('HGET', KEYS[2], 'seen') or '-'
local state = '0'
if online then state = '1' end
redis.call('PUBLISH', ARGV[2], 'p ' .. ARGV[3] .. ' ' .. state .. ' ' .. seen)
return 1
)";

std::string privacy_code(PresencePrivacy p) {
  switch (p) {
    case PresencePrivacy::kEveryone:
      return "e";
    case PresencePrivacy::kContacts:
      return "c";
    case PresencePrivacy::kNobody:
      return "n";
  }
  return "n";
}

PresencePrivacy privacy_of(std::string_view code) {
  if (code == "e" || code.empty()) return PresencePrivacy::kEveryone;  // never set: the default
  if (code == "c") return PresencePrivacy::kContacts;
  return PresencePrivacy::kNobody;  // anything else: fail closed
}

std::optional<int64_t> ms_of(std::string_view text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

RedisPresenceExchange::RedisPresenceExchange(RoutingRedis& redis, std::string gateway_id)
    : redis_(redis), gateway_id_(std::move(gateway_id)), pending_(redis.size()) {}

RedisPresenceExchange::~RedisPresenceExchange() {
  stop();
}

void RedisPresenceExchange::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    set_thread_name("presence-sub");
    run();
  });
}

void RedisPresenceExchange::stop() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
}

void RedisPresenceExchange::add_listener(const void* owner, Listener listener) {
  std::lock_guard lock(listeners_mu_);
  listeners_.emplace_back(owner, std::move(listener));
}

void RedisPresenceExchange::remove_listener(const void* owner) {
  std::lock_guard lock(listeners_mu_);
  std::erase_if(listeners_, [owner](const auto& l) { return l.first == owner; });
}

std::string RedisPresenceExchange::key(std::string_view kind, const UserId& user) const {
  return redis_.keys().prefix + std::string(kind) + ":" + user.str();
}

size_t RedisPresenceExchange::channels() const {
  std::lock_guard lock(mu_);
  return watched_.size();
}

void RedisPresenceExchange::watch(const UserId& user, bool on) {
  std::lock_guard lock(mu_);
  if (on ? !watched_.insert(user.str()).second : watched_.erase(user.str()) == 0) return;
  pending_[redis_.instance_of_user(user)].emplace_back(key("presence-ch", user), on);
  requested_++;
}

Status RedisPresenceExchange::run_script(const UserId& user, const char* script,
                                         std::vector<std::string> keys, std::vector<std::string> args) {
  RedisCommand cmd{"EVAL", script, std::to_string(keys.size())};
  for (auto& k : keys) cmd.push_back(std::move(k));
  for (auto& a : args) cmd.push_back(std::move(a));
  const size_t i = redis_.instance_of_user(user);
  QIM_ASSIGN_OR_RETURN(auto replies, redis_.run(i, std::span(&cmd, 1)));
  if (replies.front().is_error())
    return Error(Errc::kTransport,
                 "redis " + redis_.endpoint(i).to_string() + ": presence script: " + replies.front().str);
  return {};
}

Status RedisPresenceExchange::went_online(const UserId& user, PresencePrivacy privacy) {
  const int64_t now = routing_now_ms();
  const int64_t ttl = redis_.options().route_ttl.count();
  return run_script(user, kOnlineScript, {key("presence", user), key("pinfo", user)},
                    {gateway_id_, std::to_string(now), std::to_string(now + ttl), std::to_string(ttl),
                     key("presence-ch", user), privacy_code(privacy), std::to_string(kInfoTtlMs)});
}

Status RedisPresenceExchange::went_offline(const UserId& user, PresencePrivacy privacy, int64_t at_ms) {
  return run_script(user, kOfflineScript, {key("presence", user), key("pinfo", user)},
                    {gateway_id_, std::to_string(routing_now_ms()), key("presence-ch", user),
                     privacy_code(privacy), std::to_string(at_ms), std::to_string(kInfoTtlMs)});
}

Status RedisPresenceExchange::privacy_changed(const UserId& user, PresencePrivacy privacy) {
  return run_script(user, kPrivacyScript, {key("presence", user), key("pinfo", user)},
                    {std::to_string(routing_now_ms()), key("presence-ch", user), privacy_code(privacy),
                     std::to_string(kInfoTtlMs)});
}

Status RedisPresenceExchange::refresh(std::span<const UserId> users) {
  const int64_t now = routing_now_ms();
  const std::string ttl = std::to_string(redis_.options().route_ttl.count());
  const std::string expiry = std::to_string(now + redis_.options().route_ttl.count());
  std::vector<std::vector<RedisCommand>> by_instance(redis_.size());
  for (const auto& u : users) {
    auto& cmds = by_instance[redis_.instance_of_user(u)];
    cmds.push_back({"ZADD", key("presence", u), expiry, gateway_id_});
    cmds.push_back({"PEXPIRE", key("presence", u), ttl});
  }
  Status out;
  for (size_t i = 0; i < by_instance.size(); ++i) {
    if (by_instance[i].empty()) continue;
    auto r = redis_.run(i, by_instance[i]);
    if (!r.ok()) out = r.error();
  }
  return out;
}

Result<std::vector<PresenceRecord>> RedisPresenceExchange::records(std::span<const UserId> users) {
  if (thread_.joinable()) {
    // The subscriptions asked before this read are in place first (bounded: a routing instance that does
    // not answer must not hold the read; its changes are lost for pushes until it does).
    std::unique_lock lock(mu_);
    const uint64_t target = requested_;
    applied_cv_.wait_for(lock, std::chrono::seconds(1),
                         [&] { return applied_ >= target || stopping_.load(); });
  }
  std::vector<PresenceRecord> out(users.size());
  std::vector<std::vector<size_t>> index_by_instance(redis_.size());
  for (size_t k = 0; k < users.size(); ++k) index_by_instance[redis_.instance_of_user(users[k])].push_back(k);
  const std::string now = std::to_string(routing_now_ms());
  for (size_t i = 0; i < index_by_instance.size(); ++i) {
    const auto& idx = index_by_instance[i];
    if (idx.empty()) continue;
    std::vector<RedisCommand> cmds;
    cmds.reserve(idx.size() * 2);
    for (size_t k : idx) {
      cmds.push_back({"ZCOUNT", key("presence", users[k]), now, "+inf"});
      cmds.push_back({"HMGET", key("pinfo", users[k]), "seen", "privacy"});
    }
    QIM_ASSIGN_OR_RETURN(auto replies, redis_.run(i, cmds));
    for (size_t n = 0; n < idx.size(); ++n) {
      const RedisReply& count = replies[2 * n];
      const RedisReply& info = replies[2 * n + 1];
      if (count.is_error() || info.is_error())
        return Error(Errc::kTransport, "redis " + redis_.endpoint(i).to_string() +
                                           ": presence read: " + (count.is_error() ? count.str : info.str));
      PresenceRecord& r = out[idx[n]];
      r.online = count.integer > 0;
      if (info.kind == RedisReply::Kind::kArray && info.elements.size() == 2) {
        if (!info.elements[0].is_nil()) r.last_seen = ms_of(info.elements[0].str);
        r.privacy = privacy_of(info.elements[1].is_nil() ? "" : info.elements[1].str);
      }
    }
  }
  return out;
}

void RedisPresenceExchange::handle(const std::string& channel, const std::string& payload) {
  const std::string prefix = redis_.keys().prefix + "presence-ch:";
  if (!channel.starts_with(prefix)) return;
  auto user = UserId::parse(std::string_view(channel).substr(prefix.size()));
  if (!user.ok()) return;
  // "<t|p> <e|c|n> <1|0> <seen|->"
  std::vector<std::string_view> parts;
  std::string_view rest = payload;
  while (!rest.empty()) {
    const size_t sp = rest.find(' ');
    parts.push_back(rest.substr(0, sp));
    if (sp == std::string_view::npos) break;
    rest.remove_prefix(sp + 1);
  }
  if (parts.size() != 4 || (parts[0] != "t" && parts[0] != "p")) {
    spdlog::warn("presence: a publication on {} does not parse: '{}'", channel, payload.substr(0, 64));
    return;
  }
  received_++;
  PresenceChange change;
  change.user = std::move(user).value();
  change.privacy_only = parts[0] == "p";
  change.record.privacy = privacy_of(parts[1]);
  change.record.online = parts[2] == "1";
  if (parts[3] != "-") change.record.last_seen = ms_of(parts[3]);
  std::lock_guard lock(listeners_mu_);
  for (const auto& [owner, l] : listeners_) l(change);
}

void RedisPresenceExchange::run() {
  const size_t n = redis_.size();
  std::vector<std::unique_ptr<RedisConnection>> conns(n);
  const auto wait = std::chrono::milliseconds(std::max<size_t>(1, 50 / n));
  auto on_reply = [this](const RedisReply& m) {
    if (m.kind == RedisReply::Kind::kArray && m.elements.size() == 3 && m.elements[0].str == "message")
      handle(m.elements[1].str, m.elements[2].str);
  };
  while (!stopping_.load()) {
    bool any = false;
    bool all_applied = true;
    uint64_t pass_target = 0;
    {
      std::lock_guard lock(mu_);
      pass_target = requested_;
    }
    for (size_t i = 0; i < n && !stopping_.load(); ++i) {
      std::vector<std::pair<std::string, bool>> changes;
      if (!conns[i]) {
        auto conn = RedisConnection::open(redis_.endpoint(i), redis_.options().timeouts);
        if (!conn.ok()) {
          all_applied = false;
          continue;
        }
        conns[i] = std::move(conn).value();
        // A fresh connection: every channel of this instance again (whatever was pending is in it).
        std::lock_guard lock(mu_);
        pending_[i].clear();
        for (const auto& u : watched_) {
          const UserId user = UserId::unchecked(u);
          if (redis_.instance_of_user(user) == i) changes.emplace_back(key("presence-ch", user), true);
        }
      } else {
        std::lock_guard lock(mu_);
        changes.swap(pending_[i]);
      }
      if (!changes.empty()) {
        std::vector<RedisCommand> cmds;
        for (const auto& [channel, on] : changes) cmds.push_back({on ? "SUBSCRIBE" : "UNSUBSCRIBE", channel});
        auto replies = conns[i]->pipeline(cmds);
        if (!replies.ok()) {
          spdlog::warn("presence: subscriptions on {} failed: {}", redis_.endpoint(i).to_string(),
                       replies.error().to_string());
          conns[i].reset();
          all_applied = false;
          continue;
        }
        for (const auto& r : *replies) on_reply(r);  // a message may come before an acknowledgement
      }
      any = true;
      auto msg = conns[i]->read_push(wait);
      while (msg.ok() && *msg) {
        on_reply(**msg);
        msg = conns[i]->read_push(std::chrono::milliseconds(1));
      }
      if (!msg.ok()) {
        spdlog::warn("presence: subscription on {} lost: {}", redis_.endpoint(i).to_string(),
                     msg.error().to_string());
        conns[i].reset();
      }
    }
    if (all_applied) {
      std::lock_guard lock(mu_);
      if (applied_ < pass_target) applied_ = pass_target;
      applied_cv_.notify_all();
    }
    if (!any) std::this_thread::sleep_for(kBackoff);
  }
}

}  // namespace qim
