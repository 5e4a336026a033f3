#include "delivery/redis/route_registrar.h"

#include "core/thread_name.h"

#include <spdlog/spdlog.h>

namespace qim {

namespace {

// Renews the routes that are still there, and says which are not (expired ones are removed first).
// KEYS: route keys. ARGV: gateway id, now ms, new expiry ms, key TTL ms. Returns the 1-based indexes of
// the keys that did not hold this gateway's route.
constexpr const char* kRenewScript = R"lua(
local missing = {}
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[2])
  if redis.call('ZSCORE', key, ARGV[1]) then
    redis.call('ZADD', key, ARGV[3], ARGV[1])
    redis.call('PEXPIRE', key, ARGV[4])
  else
    missing[#missing + 1] = i
  end
end
return missing
)lua";

constexpr size_t kBatch = 500;  // keys per script call or pipeline

Status check_replies(const RoutingRedis& redis, size_t instance,
                     const Result<std::vector<RedisReply>>& replies) {
  if (!replies.ok()) return replies.error();
  for (const auto& r : *replies) {
    if (r.is_error())
      return Error(Errc::kTransport, "redis " + redis.endpoint(instance).to_string() + ": " + r.str);
  }
  return {};
}

}  // namespace

RedisRouteRegistrar::RedisRouteRegistrar(RoutingRedis& redis, RouteRegistrarOptions options)
    : redis_(redis), options_(std::move(options)) {
  if (options_.refresh_interval.count() <= 0) options_.refresh_interval = redis_.options().route_ttl / 3;
}

RedisRouteRegistrar::~RedisRouteRegistrar() {
  stop(false);
}

Status RedisRouteRegistrar::register_gateway() {
  const int64_t now = routing_now_ms();
  const std::string expiry = std::to_string(now + redis_.options().route_ttl.count());
  std::optional<Error> last;
  bool any = false;
  for (size_t i = 0; i < redis_.size(); ++i) {
    std::vector<RedisCommand> cmds{
        {"ZREMRANGEBYSCORE", redis_.keys().gateways(), "-inf", std::to_string(now)},
        {"ZADD", redis_.keys().gateways(), expiry, gateway_id()}};
    auto st = check_replies(redis_, i, redis_.run(i, cmds));
    if (st.ok()) {
      any = true;
    } else {
      last = st.error();
    }
  }
  if (!any) return *last;
  return {};
}

Status RedisRouteRegistrar::start() {
  if (thread_.joinable()) return Error(Errc::kInvariant, "route registrar already started");
  QIM_RETURN_IF_ERROR(register_gateway());
  stopping_ = false;
  thread_ = std::thread([this] {
    set_thread_name("route-reg");
    run();
  });
  spdlog::info("routing: gateway {} registered, routes refreshed every {} ms (TTL {} ms)", gateway_id(),
               options_.refresh_interval.count(), redis_.options().route_ttl.count());
  return {};
}

void RedisRouteRegistrar::stop(bool remove_routes) {
  {
    std::lock_guard lock(wake_mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (!remove_routes) return;
  std::lock_guard lock(mu_);
  std::vector<UserId> all;
  for (auto& [key, u] : users_) all.push_back(u.user);
  for (auto& u : removals_) all.push_back(u);
  removals_.clear();
  auto st = remove_routes_locked(all);
  for (size_t i = 0; i < redis_.size(); ++i) {
    RedisCommand cmd{"ZREM", redis_.keys().gateways(), gateway_id()};
    (void)redis_.run(i, std::span(&cmd, 1));
  }
  if (!st.ok())
    spdlog::warn("routing: gateway {}: routes left to expire: {}", gateway_id(), st.error().to_string());
}

Status RedisRouteRegistrar::write_routes_locked(const std::vector<UserRoutes*>& users) {
  const std::string expiry = std::to_string(routing_now_ms() + redis_.options().route_ttl.count());
  const std::string ttl = std::to_string(redis_.options().route_ttl.count());
  std::vector<std::vector<UserRoutes*>> by_instance(redis_.size());
  for (UserRoutes* u : users) by_instance[redis_.instance_of_user(u->user)].push_back(u);
  Status result;
  for (size_t i = 0; i < by_instance.size(); ++i) {
    for (size_t start = 0; start < by_instance[i].size(); start += kBatch) {
      const size_t end = std::min(by_instance[i].size(), start + kBatch);
      std::vector<RedisCommand> cmds;
      for (size_t k = start; k < end; ++k) {
        const std::string key = redis_.keys().route(by_instance[i][k]->user);
        cmds.push_back({"ZADD", key, expiry, gateway_id()});
        cmds.push_back({"PEXPIRE", key, ttl});
      }
      auto st = check_replies(redis_, i, redis_.run(i, cmds));
      if (!st.ok()) {
        if (result.ok()) result = st;
        break;
      }
      for (size_t k = start; k < end; ++k) by_instance[i][k]->written = true;
    }
  }
  return result;
}

Status RedisRouteRegistrar::remove_routes_locked(const std::vector<UserId>& users) {
  std::vector<std::vector<RedisCommand>> by_instance(redis_.size());
  for (const UserId& u : users)
    by_instance[redis_.instance_of_user(u)].push_back({"ZREM", redis_.keys().route(u), gateway_id()});
  Status result;
  for (size_t i = 0; i < by_instance.size(); ++i) {
    if (by_instance[i].empty()) continue;
    auto st = check_replies(redis_, i, redis_.run(i, by_instance[i]));
    if (!st.ok() && result.ok()) result = st;
  }
  return result;
}

void RedisRouteRegistrar::connection_authenticated(const UserId& user) {
  std::lock_guard lock(mu_);
  auto [it, fresh] = users_.try_emplace(user.str(), UserRoutes{user});
  UserRoutes& u = it->second;
  if (u.connections++ > 0) return;                      // the user's route is this gateway's already
  if (routing_now_ms() < redis_down_until_ms_) return;  // Redis failed just now: the refresh writes it
  auto st = write_routes_locked({&u});
  if (!st.ok()) {
    redis_down_until_ms_ = routing_now_ms() + 1000;
    spdlog::warn("routing: gateway {}: route of {} not written yet (the refresh retries): {}", gateway_id(),
                 user.str(), st.error().to_string());
  }
}

void RedisRouteRegistrar::connection_closed(const UserId& user) {
  {
    std::lock_guard lock(mu_);
    auto it = users_.find(user.str());
    if (it == users_.end() || --it->second.connections > 0) return;
    users_.erase(it);
    removals_.push_back(user);
  }
  refresh_soon();
}

void RedisRouteRegistrar::refresh_soon() {
  {
    std::lock_guard lock(wake_mu_);
    wake_now_ = true;
  }
  wake_.notify_all();
}

size_t RedisRouteRegistrar::users() const {
  std::lock_guard lock(mu_);
  return users_.size();
}

uint64_t RedisRouteRegistrar::routes_lost() const {
  std::lock_guard lock(mu_);
  return lost_;
}

Status RedisRouteRegistrar::refresh_now() {
  Status result = register_gateway();
  std::lock_guard lock(mu_);
  // Routes of users gone since the last round (unless they came back meanwhile: then they are live again).
  std::vector<UserId> gone;
  for (auto& u : removals_) {
    if (!users_.contains(u.str())) gone.push_back(u);
  }
  removals_.clear();
  if (auto st = remove_routes_locked(gone); !st.ok() && result.ok()) result = st;

  // Renew what is there; collect what is not.
  const int64_t now = routing_now_ms();
  const std::string now_s = std::to_string(now);
  const std::string expiry = std::to_string(now + redis_.options().route_ttl.count());
  const std::string ttl = std::to_string(redis_.options().route_ttl.count());
  std::vector<std::vector<UserRoutes*>> by_instance(redis_.size());
  std::vector<UserRoutes*> missing;
  for (auto& [key, u] : users_) {
    if (u.written) {
      by_instance[redis_.instance_of_user(u.user)].push_back(&u);
    } else {
      missing.push_back(&u);
    }
  }
  for (size_t i = 0; i < by_instance.size(); ++i) {
    for (size_t start = 0; start < by_instance[i].size(); start += kBatch) {
      const size_t end = std::min(by_instance[i].size(), start + kBatch);
      RedisCommand cmd{"EVAL", kRenewScript, std::to_string(end - start)};
      for (size_t k = start; k < end; ++k) cmd.push_back(redis_.keys().route(by_instance[i][k]->user));
      cmd.insert(cmd.end(), {gateway_id(), now_s, expiry, ttl});
      auto replies = redis_.run(i, std::span(&cmd, 1));
      Status st = check_replies(redis_, i, replies);
      if (!st.ok()) {
        // Unknown whether they are there: written again (and their users resynced) when Redis answers.
        for (size_t k = start; k < end; ++k) by_instance[i][k]->written = false;
        if (result.ok()) result = st;
        continue;
      }
      for (const auto& index : replies->front().elements) {
        const auto k = static_cast<size_t>(index.integer);
        if (k >= 1 && start + k - 1 < end) missing.push_back(by_instance[i][start + k - 1]);
      }
    }
  }
  if (missing.empty()) return result;

  // Rewritten, then their chains broken, with publications held back in between (see the header).
  std::vector<UserId> lost;
  for (UserRoutes* u : missing) lost.push_back(u->user);
  lost_ += lost.size();
  spdlog::warn("routing: gateway {}: {} route(s) were missing; their users resync", gateway_id(),
               lost.size());
  for (UserRoutes* u : missing) u->written = false;
  Status written;
  auto rewrite = [&] { written = write_routes_locked(missing); };
  if (options_.on_routes_lost) {
    options_.on_routes_lost(lost, rewrite);
  } else {
    rewrite();
  }
  if (!written.ok() && result.ok()) result = written;
  if (result.ok()) redis_down_until_ms_ = 0;
  return result;
}

void RedisRouteRegistrar::run() {
  std::string last_error;
  while (true) {
    {
      std::unique_lock lock(wake_mu_);
      wake_.wait_for(lock, options_.refresh_interval, [&] { return stopping_ || wake_now_; });
      if (stopping_) return;
      wake_now_ = false;
    }
    auto st = refresh_now();
    const std::string why = st.ok() ? "" : st.error().to_string();
    if (!why.empty() && why != last_error)
      spdlog::warn("routing: gateway {}: refresh failed: {}", gateway_id(), why);
    last_error = why;
  }
}

}  // namespace qim
