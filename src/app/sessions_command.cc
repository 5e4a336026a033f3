// `qim admin sessions list|revoke` (sessions_command.h).
#include "app/sessions_command.h"

#include <fmt/format.h>
#include <signal.h>

#include <filesystem>

#include "app/admin_client.h"
#include "app/config.h"
#include "app/instance_files.h"
#include "app/session_admin_routes.h"
#include "core/utc_time.h"
#include "delivery/redis/redis_signal_bus.h"
#include "delivery/redis/routing_options.h"
#include "sessions/file_session_store.h"
#include "sessions/redis/redis_session_store.h"

namespace qim {

namespace {

int failed(const char* what, const Error& e) {
  fmt::print(stderr, "{}: {}\n", what, e.to_string());
  return e.code() == Errc::kInvalidArgument || e.code() == Errc::kConfig || e.code() == Errc::kNotFound
             ? kExitRefused
             : kExitFailed;
}

// The admin port to use: --admin-port, else the running `qim up` (or gateway) of the data directory; 0:
// none (a role without a gateway, e.g. the fanout of a distributed deployment, serves no sessions).
uint16_t admin_port(const AppConfig& config, const SessionsCommand& command) {
  if (command.admin_port != 0) return command.admin_port;
  auto running = read_running_file(config.data_dir);
  if (!running.ok() || !*running || ::kill(static_cast<pid_t>((*running)->pid), 0) != 0) return 0;
  if ((*running)->gateway_port == 0) return 0;
  return (*running)->admin_port;
}

// The store and service acted on when no admin server is (3 and 4 of sessions_command.h).
struct Direct {
  std::unique_ptr<SessionStore> store;
  std::unique_ptr<RedisSignalBus> bus;
  std::unique_ptr<SessionService> service;
};

Result<Direct> open_direct(const EnvLookup& env, const AppConfig& config) {
  Direct d;
  if (env("QIM_ROUTING_REDIS")) {
    QIM_ASSIGN_OR_RETURN(auto routing, routing_options_from_env(env));
    QIM_ASSIGN_OR_RETURN(d.store, RedisSessionStore::create(routing));
    // Test-only (docs/protocol.md "Test-only knobs"): no push, so the gateways' catch-up alone must close.
    if (env("QIM_TEST_SESSIONS_NO_PUSH") != "1") {
      QIM_ASSIGN_OR_RETURN(d.bus, RedisSignalBus::create(routing));
    }
  } else {
    if (!std::filesystem::exists(config.data_dir + "/outbox-log/META"))
      return Error(Errc::kNotFound,
                   "no QIM instance in " + config.data_dir +
                       " (QIM_DATA_DIR / --data-dir), no --admin-port and no QIM_ROUTING_REDIS");
    QIM_ASSIGN_OR_RETURN(d.store, FileSessionStore::open(config.data_dir));
  }
  d.service = std::make_unique<SessionService>(*d.store, d.bus.get(), config.store.clock);
  return d;
}

}  // namespace

int run_sessions_list(const EnvLookup& env, const SessionsCommand& command) {
  constexpr const char* kWhat = "qim admin sessions list";
  auto user = UserId::parse(command.user);
  if (!user.ok()) return failed(kWhat, user.error());
  auto config = app_config_from_env(env);
  if (!config.ok()) return failed(kWhat, config.error());
  if (uint16_t port = admin_port(*config, command)) {
    auto body =
        admin_request(port, "GET", "/admin/sessions?user=" + user->str() + (command.json ? "&json=1" : ""));
    if (!body.ok()) return failed(kWhat, body.error());
    fmt::print("{}", *body);
    return kExitOk;
  }
  auto direct = open_direct(env, *config);
  if (!direct.ok()) return failed(kWhat, direct.error());
  auto marks = direct->service->marks(*user);
  if (!marks.ok()) return failed(kWhat, marks.error());
  auto devices = direct->service->devices(*user);
  if (!devices.ok()) return failed(kWhat, devices.error());
  fmt::print("{}", command.json ? devices_json(*user, *marks, *devices)
                                : render_devices_text(*user, *marks, *devices));
  return kExitOk;
}

int run_sessions_revoke(const EnvLookup& env, const SessionsCommand& command) {
  constexpr const char* kWhat = "qim admin sessions revoke";
  auto user = UserId::parse(command.user);
  if (!user.ok()) return failed(kWhat, user.error());
  std::optional<DeviceId> device;
  if (!command.device.empty()) {
    auto d = DeviceId::parse(command.device);
    if (!d.ok()) return failed(kWhat, d.error());
    device = std::move(d).value();
  }
  auto config = app_config_from_env(env);
  if (!config.ok()) return failed(kWhat, config.error());
  if (uint16_t port = admin_port(*config, command)) {
    std::string target = "/admin/sessions/revoke?user=" + user->str();
    if (device) target += "&device=" + device->str();
    auto body = admin_request(port, "POST", target);
    if (!body.ok()) return failed(kWhat, body.error());
    fmt::print("{}", *body);
    return kExitOk;
  }
  auto direct = open_direct(env, *config);
  if (!direct.ok()) return failed(kWhat, direct.error());
  auto nb = direct->service->revoke(*user, device);
  if (!nb.ok()) return failed(kWhat, nb.error());
  if (direct->bus) direct->bus->flush();  // the push leaves before the process does
  fmt::print("revoked {} of {} issued before {} (not_before {})\n",
             device ? "the sessions of device " + device->str() : std::string("every session"), user->str(),
             utc_time(*nb), *nb);
  return kExitOk;
}

}  // namespace qim
