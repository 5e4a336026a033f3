// `qim up` and the single-role commands: open, start, wait for a signal or a fatal error, drain, stop.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "app/admin_routes.h"
#include "app/commands.h"
#include "app/config.h"
#include "app/instance_files.h"
#include "app/pipeline.h"
#include "app/role_admin.h"
#include "gateway/gateway.h"
#include "gateway/gateway_options.h"

namespace qim {

namespace {

int exit_code_for(const Error& e) {
  return e.code() == Errc::kConfig || e.code() == Errc::kEpochAhead ? kExitRefused : kExitFailed;
}

int refuse(spdlog::logger& log, const std::string& what, const Error& e) {
  if (e.code() == Errc::kEpochAhead) {
    log.critical(
        "{}: refusing to start (fail closed): {}. Another owner took this shard at a higher epoch; "
        "restart with QIM_EPOCH at or above it.",
        what, e.to_string());
  } else {
    log.critical("{}: {}", what, e.to_string());
  }
  return exit_code_for(e);
}

struct Instance {
  bool gateway = false;
  PipelineRoles roles;
  std::string name;  // for messages: "qim up", "qim fanout", ...
};

void print_banner(const AppConfig& c, const Gateway* gw, const RoleAdmin* admin, bool dev_secret,
                  const std::string& name) {
  const std::string dir = std::filesystem::absolute(c.data_dir).lexically_normal().string();
  std::string shards = std::to_string(c.owned_shards.size()) + " of " + std::to_string(c.shards) + " shards";
  fmt::print("{} is running: {} log, {} mailbox store, {}, epoch {}, delivery {}, data in {}\n", name,
             c.log.backend, c.store.backend, shards, c.epoch.value, c.delivery_mode, dir);
  if (gw != nullptr) {
    fmt::print("  clients connect to  ws://127.0.0.1:{}/   (protocol: docs/protocol.md)\n", gw->port());
    fmt::print("  admin               http://127.0.0.1:{}/healthz  /metrics  /admin/pipeline\n",
               gw->admin_port());
    fmt::print("  get a token         qim token --data-dir {} --user alice --device d1\n", dir);
    if (dev_secret)
      fmt::print("                      (dev secret in {}/auth-secret; set QIM_AUTH_SECRET to choose one)\n",
                 dir);
  }
  if (admin != nullptr) {
    fmt::print("  admin               http://{}:{}/healthz  /metrics  /admin/pipeline\n", c.admin_address,
               admin->port());
  }
  fmt::print("  stop with Ctrl-C or SIGTERM: {}, exit 0\n",
             gw != nullptr ? "the gateway stops accepting, the pipeline drains" : "the role drains");
  std::fflush(stdout);
}

int run_instance(const EnvLookup& base_env, const Instance& instance) {
  auto& log = *spdlog::default_logger();
  auto config = app_config_from_env(base_env);
  if (!config.ok()) return refuse(log, instance.name, config.error());
  const AppConfig& cfg = *config;
  spdlog::set_level(cfg.log_level);

  EnvLookup env = base_env;
  bool dev_secret = false;
  if (instance.gateway && !base_env("QIM_AUTH_SECRET")) {
    auto secret = load_or_create_dev_secret(cfg.data_dir);
    if (!secret.ok()) return refuse(log, instance.name, secret.error());
    env = with_overrides(base_env, {{"QIM_AUTH_SECRET", *secret}});
    dev_secret = true;
  }

  // Signals are taken synchronously by this thread (sigtimedwait); every thread started later inherits the
  // mask, so none of them is interrupted.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  auto opened = Pipeline::open(cfg, instance.roles, spdlog::default_logger());
  if (!opened.ok()) return refuse(log, instance.name, opened.error());
  std::unique_ptr<Pipeline> pipeline = std::move(opened).value();
  // The logs are locked now, so a running.json here is left over from a process that did not exit cleanly.
  remove_running_file(cfg.data_dir);

  std::unique_ptr<Gateway> gateway;
  if (instance.gateway) {
    auto options = gateway_options_from_env(env);
    if (!options.ok()) return refuse(log, instance.name, options.error());
    GatewayDeps deps;
    deps.outbox = &pipeline->outbox();
    deps.mailbox = &pipeline->store();
    deps.history = &pipeline->history();
    deps.clock = cfg.store.clock;
    deps.shard_count = cfg.shards;
    deps.extra_metrics = [p = pipeline.get()] { return p->prometheus(); };
    deps.admin_routes = pipeline_admin_routes(*pipeline);
    gateway = make_gateway(*std::move(options), std::move(deps));
    if (cfg.delivery_mode != "pull") pipeline->deliver_to(&gateway->notifier());
  }
  std::atomic<bool> fatal{false};
  pipeline->on_fatal([&fatal](const Error&) { fatal = true; });
  if (Status s = pipeline->start(); !s.ok()) {
    (void)pipeline->shutdown();
    return refuse(log, instance.name, s.error());
  }
  // A role without a gateway serves the gateway's admin endpoints from an admin server of its own.
  std::unique_ptr<RoleAdmin> admin;
  if (gateway) {
    if (Status s = gateway->start(); !s.ok()) {
      (void)pipeline->shutdown();
      return refuse(log, instance.name + ": the gateway cannot start", s.error());
    }
  } else {
    admin = std::make_unique<RoleAdmin>([p = pipeline.get()] { return p->prometheus(); },
                                        pipeline_admin_routes(*pipeline));
    if (Status s = admin->start(cfg.admin_address, cfg.admin_port); !s.ok()) {
      (void)pipeline->shutdown();
      return refuse(log, instance.name + ": the admin server cannot start", s.error());
    }
  }
  RunningInstance running{::getpid(), gateway ? gateway->port() : uint16_t{0},
                          gateway ? gateway->admin_port() : admin->port(), cfg.epoch.value};
  if (Status s = write_running_file(cfg.data_dir, running); !s.ok()) {
    log.warn("cannot write {}/running.json (operator commands will not find this instance): {}", cfg.data_dir,
             s.error().to_string());
  }
  print_banner(cfg, gateway.get(), admin.get(), dev_secret, instance.name);

  int signal_number = 0;
  std::string last_summary;
  auto next_summary = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!fatal) {
    timespec tick{0, 200'000'000};
    const int sig = sigtimedwait(&signals, nullptr, &tick);
    if (sig > 0) {
      signal_number = sig;
      break;
    }
    if (std::chrono::steady_clock::now() >= next_summary) {
      next_summary += std::chrono::seconds(30);
      if (std::string s = pipeline->summary(); s != last_summary) {
        log.info("{}", s);
        last_summary = std::move(s);
      }
    }
  }
  if (signal_number != 0) {
    log.info("{}: stopping{}, then draining the pipeline", strsignal(signal_number),
             gateway ? " the gateway (no new connections or sends)" : "");
  } else {
    log.critical("a shard worker stopped on a fatal error ({}); shutting down",
                 pipeline->fatal() ? pipeline->fatal()->to_string() : "unknown");
  }
  if (gateway) gateway->stop();
  Status drained = pipeline->shutdown();
  gateway.reset();           // after the pipeline stopped reporting to it
  if (admin) admin->stop();  // answered /healthz and /metrics through the drain
  remove_running_file(cfg.data_dir);
  pipeline.reset();  // flushes and closes the logs and stores
  if (!drained.ok()) {
    log.error("shutdown: {}", drained.error().to_string());
    return kExitFailed;
  }
  log.info("stopped cleanly");
  return fatal ? kExitFailed : kExitOk;
}

}  // namespace

int run_up(const EnvLookup& env) {
  return run_instance(env, Instance{true, PipelineRoles{}, "qim up"});
}

int run_role(const std::string& role, const EnvLookup& env) {
  auto& log = *spdlog::default_logger();
  auto config = app_config_from_env(env);
  if (!config.ok()) return refuse(log, "qim " + role, config.error());
  if (Status s = check_role_config(role, *config); !s.ok()) return refuse(log, "qim " + role, s.error());
  // Every gateway must accept the tokens of the others: a development secret made in this process's data
  // directory would be one gateway's alone.
  if (role == "gateway" && !env("QIM_AUTH_SECRET")) {
    return refuse(log, "qim gateway",
                  Error(Errc::kConfig,
                        "QIM_AUTH_SECRET is not set: every gateway of a distributed deployment must verify "
                        "tokens with the same secret, so set QIM_AUTH_SECRET (the same value) for each"));
  }
  Instance instance{role == "gateway", PipelineRoles{role == "fanout", role == "mailbox", role == "archiver"},
                    "qim " + role};
  return run_instance(env, instance);
}

}  // namespace qim
