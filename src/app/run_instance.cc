// `qim up` and the single-role commands: open, start, wait for a signal or a fatal error, drain, stop.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <filesystem>

#include "api/api_server.h"
#include "app/admin_routes.h"
#include "app/commands.h"
#include "app/config.h"
#include "app/engine_hint.h"
#include "app/instance_files.h"
#include "app/pipeline.h"
#include "app/push_role.h"
#include "app/role_admin.h"
#include "app/session_admin_routes.h"
#include "app/webhook_role.h"
#include "attachments/attachment_options.h"
#include "attachments/attachment_service.h"
#include "attachments/object_store.h"
#include "attachments/orphan_sweeper.h"
#include "attachments/redis/redis_upload_budget.h"
#include "attachments/s3/s3_options.h"
#include "attachments/upload_budget.h"
#if QIM_WITH_S3
#include "attachments/s3/s3_object_store.h"
#endif
#include "core/cpu_placement.h"
#include "delivery/local_signal_bus.h"
#include "delivery/redis/gateway_routing.h"
#include "delivery/redis/redis_send_dedup.h"
#include "delivery/redis/redis_signal_bus.h"
#include "delivery/redis/routed_notifier.h"
#include "delivery/redis/routing_options.h"
#include "gateway/before_send_hook.h"
#include "gateway/gateway.h"
#include "gateway/gateway_options.h"
#include "inbox/delivered_notifier.h"
#include "inbox/inbox.h"
#include "node/lease/lease_config.h"
#include "presence/inbox_presence_directory.h"
#include "presence/memory_presence_exchange.h"
#include "presence/presence_options.h"
#include "presence/redis/redis_presence_exchange.h"
#include "sessions/file_session_store.h"
#include "sessions/redis/redis_session_store.h"
#include "tls/dev_cert.h"
#include "users/redis/redis_user_cells.h"
#include "users/user_registry.h"
#include "users/user_registry_follower.h"

namespace qim {

namespace {

// The ownership loop's state on /metrics.
std::string ownership_prometheus(const OwnershipMetrics& m) {
  std::string out;
  auto one = [&out](const char* name, const char* type, const char* help, uint64_t v) {
    out += fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n{0} {3}\n", name, help, type, v);
  };
  one("qim_lease_shards_held", "gauge", "Shard leases this node holds", m.held.size());
  one("qim_lease_live_nodes", "gauge", "Live nodes at the last scan", m.live_nodes);
  one("qim_lease_acquired_total", "counter", "Shard leases taken (each at a new epoch)", m.acquired);
  one("qim_lease_released_total", "counter", "Shard leases given up gracefully", m.released);
  one("qim_lease_lost_total", "counter", "Shard leases lost (not renewed in time, refused, fenced)", m.lost);
  one("qim_lease_renew_failures_total", "counter", "Renewals that could not reach the lease store",
      m.renew_failures);
  one("qim_lease_take_failures_total", "counter",
      "Shard takes that failed (check, grant or worker start); each backs the shard off", m.take_failures);
  // Alert on any: a stopped shard is written by nobody until `qim admin shard clear N`.
  one("qim_lease_shards_stopped", "gauge", "Held shards whose worker stopped on a fatal error",
      m.stopped.size());
  if (!m.stopped.empty()) {
    out +=
        "# HELP qim_lease_shard_stopped A held shard stopped on a fatal error (qim admin shard clear N)\n"
        "# TYPE qim_lease_shard_stopped gauge\n";
    for (const auto& [shard, why] : m.stopped)
      out += fmt::format("qim_lease_shard_stopped{{shard=\"{}\"}} 1\n", shard.value);
  }
  return out;
}

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
  std::string name;       // for messages: "qim up", "qim fanout", ...
  bool alone = false;     // one role in its own process: delivery goes through the routing Redis
  bool webhooks = false;  // `qim webhooks`: the event webhook is the role (QIM_WEBHOOK_URL required)
  bool push = false;      // `qim push`: offline push is the role (docs/push.md)
};

// The leases of a `qim mailbox` whose shards are not configured (QIM_OWNED_SHARDS unset or auto).
struct Leases {
  OwnershipOptions options;
  std::unique_ptr<LeaseStore> store;
  std::unique_ptr<ShardOwnership> loop;  // after the node started; stopped before its drain
};

void print_banner(const AppConfig& c, const Gateway* gw, const GatewayOptions& gw_options,
                  const RoleAdmin* admin, bool dev_secret, const std::string& dev_ca,
                  const std::string& name) {
  const std::string dir = std::filesystem::absolute(c.data_dir).lexically_normal().string();
  std::string shards = std::to_string(c.owned_shards.size()) + " of " + std::to_string(c.shards) + " shards";
  fmt::print("{} is running: {} log, {} mailbox store, {}, epoch {}, delivery {}, data in {}\n", name,
             c.log.backend, c.store.backend, shards, c.epoch.value, c.delivery_mode, dir);
  if (gw != nullptr) {
    const bool tls = !gw_options.tls_cert_file.empty();
    fmt::print("  clients connect to  {}://127.0.0.1:{}/   (protocol: docs/protocol.md)\n",
               tls ? "wss" : "ws", gw->port());
    if (!dev_ca.empty()) fmt::print("  trust (dev TLS)     {}   (qimctl --ca, QIM_TLS_CA)\n", dev_ca);
    if (!gw_options.web_dir.empty())
      fmt::print("  web chat page       {}://127.0.0.1:{}/   (files in {}{})\n", tls ? "https" : "http",
                 gw->port(), gw_options.web_dir, gw_options.dev_tokens ? "; dev tokens on" : "");
    fmt::print(
        "  admin               http://127.0.0.1:{}/healthz  /metrics  (/admin/*: qim status, or header "
        "X-QIM-Admin)\n",
        gw->admin_port());
    // The binary's own path: `qim` is rarely on PATH in a fresh clone, and this line is pasted as it is.
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    fmt::print("  get a token         {} token --data-dir {} --user alice --device d1\n",
               ec ? std::string("qim") : self.string(), dir);
    if (dev_secret)
      fmt::print("                      (dev secret in {}/auth-secret; set QIM_AUTH_SECRET to choose one)\n",
                 dir);
  }
  if (admin != nullptr) {
    fmt::print(
        "  admin               http://{}:{}/healthz  /metrics  (/admin/*: qim status, or header "
        "X-QIM-Admin)\n",
        c.admin_address, admin->port());
  }
  fmt::print("  stop with Ctrl-C or SIGTERM: {}, exit 0\n",
             gw != nullptr ? "the gateway stops accepting, the pipeline drains" : "the role drains");
  std::fflush(stdout);
}

int run_instance(const EnvLookup& base_env, const Instance& instance) {
  auto& log = *spdlog::default_logger();
  // An engine that cannot be reached names the variable that says where it is (with_engine_hint).
  auto refuse = [&base_env](spdlog::logger& l, const std::string& what, const Error& e) {
    return qim::refuse(l, what, with_engine_hint(e, base_env));
  };
  auto config = app_config_from_env(base_env);
  if (!config.ok()) return refuse(log, instance.name, config.error());
  const AppConfig& cfg = *config;
  spdlog::set_level(cfg.log_level);

  EnvLookup env = base_env;
  // `qim up --dev-tls`: serve wss:// with a self-signed pair kept in the data directory.
  std::string dev_ca;
  if (auto v = base_env("QIM_DEV_TLS"); v && *v == "1" && instance.gateway) {
    if (base_env("QIM_TLS_CERT") || base_env("QIM_TLS_KEY"))
      return refuse(log, instance.name,
                    Error(Errc::kConfig,
                          "--dev-tls (QIM_DEV_TLS=1) and QIM_TLS_CERT/QIM_TLS_KEY both set: "
                          "choose the development pair or your own"));
    auto files = tls::ensure_dev_cert((std::filesystem::path(cfg.data_dir) / "tls").string());
    if (!files.ok()) return refuse(log, instance.name + ": the development certificate", files.error());
    dev_ca = std::filesystem::absolute(files->cert).lexically_normal().string();
    env = with_overrides(env, {{"QIM_TLS_CERT", files->cert}, {"QIM_TLS_KEY", files->key}});
  } else if (v && *v != "0" && *v != "1") {
    return refuse(log, instance.name, Error(Errc::kConfig, "QIM_DEV_TLS='" + *v + "': expected 0 or 1"));
  }
  bool dev_secret = false;
  if (instance.gateway && !base_env("QIM_AUTH_SECRET")) {
    auto secret = load_or_create_dev_secret(cfg.data_dir);
    if (!secret.ok()) return refuse(log, instance.name, secret.error());
    env = with_overrides(env, {{"QIM_AUTH_SECRET", *secret}});
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

  // CPU placement (core/cpu_placement.h, decision 48): this thread is confined to the pipeline's CPUs
  // before any stage starts, so every thread started from here on runs there; the gateway's I/O threads
  // move themselves to theirs.
  const bool pipeline_roles = instance.roles.fanout || instance.roles.node || instance.roles.archiver;
  auto cpus = allowed_cpus();
  if (!cpus.ok()) return refuse(log, instance.name, cpus.error());
  auto placement = plan_cpu_placement(cfg.cpu_placement, *cpus, instance.gateway, pipeline_roles);
  if (!placement.ok()) {
    return refuse(log, instance.name,
                  Error(Errc::kConfig, "QIM_CPU_PLACEMENT: " + placement.error().message()));
  }
  if (Status s = pin_current_thread(placement->pipeline); !s.ok())
    return refuse(log, instance.name, s.error());
  log.info("cpu placement ({}): pipeline on {}, gateway I/O on {}", placement->why,
           placement->pipeline.empty() ? "any CPU" : "CPU " + format_cpu_list(placement->pipeline),
           placement->gateway.empty() ? "any CPU" : "CPU " + format_cpu_list(placement->gateway));

  // Attachments (docs/protocol.md "Attachments", docs/operations.md): the object store QIM_S3_* names, for
  // the gateway (it signs URLs and checks SENDs), the archiver (a recall deletes the message's objects) and
  // the orphan sweep. None configured: ATTACH is refused with ATTACHMENTS_DISABLED. Declared before the
  // pipeline, so it outlives the archiver and the gateway that use it.
  std::unique_ptr<attachments::ObjectStore> object_store;
  std::unique_ptr<attachments::AttachmentService> attachment_rules;  // deletions and the sweep
  std::unique_ptr<attachments::OrphanSweeper> orphan_sweeper;
  {
    auto s3 = attachments::s3_config_from_env(env);
    if (!s3.ok()) return refuse(log, instance.name, s3.error());
    if (s3->has_value()) {
#if QIM_WITH_S3
      auto store = attachments::open_s3_object_store(**s3);
      if (!store.ok()) return refuse(log, instance.name, store.error());
      object_store = std::move(store).value();
#else
      return refuse(log, instance.name,
                    Error(Errc::kConfig,
                          "QIM_S3_ENDPOINT is set, but this qim was built without the S3 object "
                          "store (cmake -DQIM_WITH_S3=ON, as scripts/build.sh does)"));
#endif
      auto rules_options = attachments::attachment_options_from_env(env);
      if (!rules_options.ok()) return refuse(log, instance.name, rules_options.error());
      // The ids' mac is not used by deletions and the sweep; a role without QIM_AUTH_SECRET still deletes.
      attachment_rules = std::make_unique<attachments::AttachmentService>(
          *object_store, env("QIM_AUTH_SECRET").value_or("(deletions only)"), *rules_options,
          cfg.store.clock);
    }
  }

  auto opened = Pipeline::open(cfg, instance.roles, spdlog::default_logger());
  if (!opened.ok()) return refuse(log, instance.name, opened.error());
  std::unique_ptr<Pipeline> pipeline = std::move(opened).value();
  if (attachment_rules) {
    pipeline->set_on_recall([rules = attachment_rules.get()](const Message& original) {
      return rules->delete_objects_of(original.sender, original.conversation, original.body);
    });
  }
  // The logs are locked now, so a running.json here is left over from a process that did not exit cleanly.
  remove_running_file(cfg.data_dir);

  // The event webhook (docs/webhooks.md): in `qim up` when QIM_WEBHOOK_URL is set, or the role itself (not
  // in every `qim gateway` of a deployment that shares one environment). Declared after the pipeline, whose
  // Outbox and group store it reads.
  std::optional<WebhookRole> webhooks;
  if ((instance.gateway && !instance.alone) || instance.webhooks) {
    auto w = open_webhook_role(env, cfg, *pipeline, spdlog::default_logger());
    if (!w.ok()) return refuse(log, instance.name, w.error());
    webhooks = std::move(w).value();
    if (instance.webhooks && !webhooks) {
      return refuse(
          log, instance.name,
          Error(Errc::kConfig, "QIM_WEBHOOK_URL is not set: `qim webhooks` sends the events there"));
    }
  }
  WebhookConsumer* hooks = webhooks ? webhooks->consumer.get() : nullptr;

  // Offline push (docs/push.md): its configuration is read by every gateway too (PUSH_CONFIG tells clients
  // the VAPID key); `qim up` keeps its VAPID key in the data directory.
  auto push_config = push_config_from_env(
      env, instance.gateway && !instance.alone ? std::optional<std::string>(cfg.data_dir) : std::nullopt);
  // (A gateway of a distributed deployment reads no key: it answers what `qim push` published.)
  if (!push_config.ok()) return refuse(log, instance.name, push_config.error());

  // Declared after the pipeline: the loop goes before the node it adds shards to, on every path.
  std::optional<Leases> leases;
  if (instance.roles.leased) {
    auto options = ownership_options_from_env(env, cfg.store);
    if (!options.ok()) return refuse(log, instance.name, options.error());
    auto store = open_lease_store(cfg.store);
    if (!store.ok()) return refuse(log, instance.name + ": the shard leases", store.error());
    leases = Leases{std::move(options).value(), std::move(store).value(), nullptr};
    leases->options.logger = spdlog::default_logger();
  }

  // Across processes the node's frontier moves reach the gateways through the routing Redis
  // (delivery/redis/): the node publishes to the gateways holding the users concerned, each gateway
  // subscribes to its channel and records its users' routes. In `qim up` delivery stays in process.
  const bool routed = instance.alone && cfg.delivery_mode != "pull";
  std::optional<RoutingOptions> routing_options;
  if (routed && (instance.gateway || instance.roles.node)) {
    auto ro = routing_options_from_env(env);
    if (!ro.ok()) return refuse(log, instance.name, ro.error());
    routing_options = std::move(ro).value();
  }
  std::unique_ptr<RoutingRedis> routing_redis;
  std::unique_ptr<RoutedNotifier> routed_notifier;  // the node's publisher; after the pipeline's shutdown
  if (routing_options && instance.roles.node) {
    auto redis = RoutingRedis::create(*routing_options);
    if (!redis.ok()) return refuse(log, instance.name, redis.error());
    routing_redis = std::move(redis).value();
    routed_notifier = std::make_unique<RoutedNotifier>(*routing_redis);
    pipeline->deliver_to(routed_notifier.get());
  }
  std::unique_ptr<GatewayRouting> routing;  // the gateway's routes and subscription
  // Ephemeral signals (docs/adr/0080): in one process over the gateway's connections, across processes
  // over the routing Redis. A MailboxNode process has one too (node_signals: its signals, e.g. DELIVERED,
  // reach the gateways holding the users). Declared before the gateway, which sends on it.
  std::unique_ptr<SignalBus> signal_bus;
  LocalSignalBus* local_signals = nullptr;
  std::unique_ptr<RedisSignalBus> node_signals;
  if (routing_redis) node_signals = std::make_unique<RedisSignalBus>(*routing_redis, std::string());
  if (routing_options && instance.gateway) {
    auto r = GatewayRouting::create(*routing_options, cfg.shards);
    if (!r.ok()) return refuse(log, instance.name, r.error());
    routing = std::move(r).value();
    signal_bus = std::make_unique<RedisSignalBus>(routing->redis(), routing->gateway_id());
  } else if (instance.gateway) {
    auto local = std::make_unique<LocalSignalBus>();
    local_signals = local.get();
    signal_bus = std::move(local);
  }
  // Presence (docs/adr/0081): the gateway's hub over an exchange in memory (`qim up`) or in the routing
  // Redis (a pub/sub channel per watched user). The inbox is its directory: a user's direct peers (watched
  // from AUTH) and the "presence" privacy setting; without an inbox, no implicit peers, privacy "everyone".
  std::unique_ptr<PresenceDirectory> presence_directory;
  if (pipeline->inbox() != nullptr)
    presence_directory = std::make_unique<InboxPresenceDirectory>(pipeline->inbox()->backend());
  std::unique_ptr<PresenceExchange> presence_exchange;
  RedisPresenceExchange* redis_presence = nullptr;
  std::unique_ptr<PresenceHub> presence;
  if (instance.gateway) {
    auto po = presence_options_from_env(env);
    if (!po.ok()) return refuse(log, instance.name, po.error());
    if (routing) {
      auto e = std::make_unique<RedisPresenceExchange>(routing->redis(), routing->gateway_id());
      redis_presence = e.get();
      presence_exchange = std::move(e);
    } else {
      presence_exchange = std::make_unique<MemoryPresenceExchange>();
    }
    presence =
        std::make_unique<PresenceHub>(*presence_exchange, presence_directory.get(), cfg.store.clock, *po);
  }
  // DELIVERED (docs/adr/0078): the node tells a sender when the recipient's mailbox holds the message, on
  // this process's bus (`qim up`: the local one; a mailbox role: node_signals), behind the fan-in thread.
  std::unique_ptr<DeliveredNotifier> delivered;
  if (SignalBus* bus = node_signals ? node_signals.get() : signal_bus.get(); bus && instance.roles.node) {
    delivered = std::make_unique<DeliveredNotifier>(*bus);
    pipeline->deliver_to(delivered.get());
  }

  // Sessions (docs/adr/0099): the revocation marks where every gateway reads them at AUTH: `qim up` in its
  // data directory, a gateway of a distributed deployment in the routing Redis. The service behind the
  // admin routes pushes each revocation on this process's signal bus. Outlive the gateway.
  std::unique_ptr<SessionStore> session_store;
  std::unique_ptr<SessionService> sessions;
  if (instance.gateway) {
    if (routing) {
      session_store = std::make_unique<RedisSessionStore>(routing->redis(), routing->gateway_id());
    } else if (instance.alone) {
      // A gateway alone without routed delivery (pull) still shares the marks with the other gateways.
      auto ro = routing_options_from_env(env);
      if (!ro.ok()) return refuse(log, instance.name, ro.error());
      auto s = RedisSessionStore::create(*ro);
      if (!s.ok()) return refuse(log, instance.name + ": the session store", s.error());
      session_store = std::move(s).value();
    } else {
      auto s = FileSessionStore::open(cfg.data_dir);
      if (!s.ok()) return refuse(log, instance.name + ": the session store", s.error());
      session_store = std::move(s).value();
    }
    sessions = std::make_unique<SessionService>(*session_store, signal_bus.get(), cfg.store.clock);
  } else if (instance.push) {
    // Who is online and who was revoked: the gateways record both in the routing Redis.
    auto ro = routing_options_from_env(env);
    if (!ro.ok()) return refuse(log, instance.name, ro.error());
    auto s = RedisSessionStore::create(*ro);
    if (!s.ok()) return refuse(log, instance.name + ": the session store (QIM_ROUTING_REDIS)", s.error());
    session_store = std::move(s).value();
  }
  // Declared after the session store it reads; stopped before it on every path (its destructor stops it).
  std::optional<PushRole> push_role;
  if ((instance.gateway && !instance.alone) || instance.push) {
    auto p = open_push_role(*push_config, *pipeline, session_store.get(), instance.push, cfg.store.clock,
                            spdlog::default_logger());
    if (!p.ok()) return refuse(log, instance.name, p.error());
    push_role = std::move(p).value();
  }
  PushConsumer* pusher = push_role ? push_role->consumer.get() : nullptr;
  // What PUSH_CONFIG answers on every gateway (push/push_registry.h): this process's push role's providers
  // and VAPID key, or nothing when `qim up` runs without push.
  if (((instance.gateway && !instance.alone) || instance.push) && pipeline->inbox() != nullptr) {
    const PushDoor door = push_role ? push_door_of(*push_config) : PushDoor{};
    if (Status s = publish_push_door(pipeline->inbox()->backend(), door, cfg.store.clock->now_ms()); !s.ok())
      return refuse(log, instance.name + ": publishing the push configuration", s.error());
  }

  // Gateways of one deployment share the SEND idempotency table in the routing Redis, so a retry through
  // another gateway gets the same message id (docs/protocol.md "Idempotent send"). Outlives the gateway.
  std::unique_ptr<RedisSendDedup> shared_dedup;
  // `qim up` with the server API: the gateway's in-memory table, owned here so both doors share it.
  std::unique_ptr<MemorySendDedup> own_dedup;
  // The before-send hook both doors ask (docs/webhooks.md "Before send"): off unless QIM_BEFORE_SEND_URL.
  // Stopped after the gateway and the API, whose SENDs it answers.
  std::unique_ptr<BeforeSendHook> before_send;
  // The user registry (docs/api.md "Users"): off unless QIM_USER_REGISTRY=1; `qim up` keeps it in its data
  // directory. Outlives the gateway and the API.
  std::unique_ptr<UserRegistry> users;
  std::unique_ptr<UserRegistryFollower> users_follower;  // the other gateways' writes (distributed only)
  std::optional<api::ApiOptions> api_options;  // the server API (docs/api.md): off unless QIM_API_LISTEN
  std::unique_ptr<api::ApiServer> api_server;
  // The daily upload budget ATTACH grants are charged to (docs/adr/0158): `qim up` in its memory, a
  // gateway of a distributed deployment in the routing Redis every gateway shares. Outlives the gateway.
  std::unique_ptr<attachments::UploadBudget> upload_budget;
  std::unique_ptr<Gateway> gateway;
  GatewayOptions gateway_options;  // for the banner
  if (instance.gateway) {
    auto options = gateway_options_from_env(env);
    if (!options.ok()) return refuse(log, instance.name, options.error());
    options->io_cpus = placement->gateway;
    // The embedded Outbox's durable write is this process's fsync: bounded by the SLO unless configured
    // (decision 105). On Kafka the append has its own bound (QIM_KAFKA_APPEND_TIMEOUT_MS).
    if (!env("QIM_SEND_ACK_DEADLINE_MS") && cfg.log.backend == "embedded")
      options->send_ack_deadline_ms = kSloSendAckDeadlineMs;
    gateway_options = *options;
    GatewayDeps deps;
    if (routing_options) {
      RedisSendDedupOptions dedup;
      dedup.window_ms = options->dedup_window_ms;
      auto d = RedisSendDedup::create(*routing_options, dedup);
      if (!d.ok()) return refuse(log, instance.name + ": the shared send table", d.error());
      shared_dedup = std::move(d).value();
      deps.send_dedup = shared_dedup.get();
    }
    auto ao = api::api_options_from_env(env, cfg.data_dir);
    if (!ao.ok()) return refuse(log, instance.name, ao.error());
    api_options = *ao;
    if (api_options && !shared_dedup) {
      own_dedup = std::make_unique<MemorySendDedup>(options->dedup_capacity, options->dedup_window_ms);
      deps.send_dedup = own_dedup.get();
    }
    if (auto v = env("QIM_USER_REGISTRY"); v && *v != "0") {
      if (*v != "1")
        return refuse(log, instance.name,
                      Error(Errc::kConfig, "QIM_USER_REGISTRY='" + *v + "': expected 0 or 1"));
      // `qim up`: RocksDB in its data directory. A gateway of a distributed deployment: the routing
      // Redis every gateway shares, followed every QIM_USER_REGISTRY_REFRESH_MS (docs/adr/0149).
      std::unique_ptr<UserCells> cells;
      if (routing) {
        cells = std::make_unique<RedisUserCells>(routing->redis());
      } else if (routing_options || instance.alone) {
        auto ro = routing_options ? Result<RoutingOptions>(*routing_options) : routing_options_from_env(env);
        if (!ro.ok()) return refuse(log, instance.name, ro.error());
        auto c = RedisUserCells::create(*ro);
        if (!c.ok()) return refuse(log, instance.name + ": the user registry (QIM_ROUTING_REDIS)", c.error());
        cells = std::move(c).value();
      } else {
        auto c = open_rocks_user_cells(cfg.data_dir + "/users");
        if (!c.ok()) return refuse(log, instance.name + ": the user registry", c.error());
        cells = std::move(c).value();
      }
      const bool shared_cells = routing_options || instance.alone || routing;
      auto reg = UserRegistry::open(std::move(cells), cfg.store.clock);
      if (!reg.ok()) return refuse(log, instance.name + ": the user registry", reg.error());
      users = std::move(reg).value();
      deps.users = users.get();
      if (shared_cells) {
        int64_t refresh_ms = 1000;
        if (auto r = env("QIM_USER_REGISTRY_REFRESH_MS")) {
          auto [end, ec] = std::from_chars(r->data(), r->data() + r->size(), refresh_ms);
          if (ec != std::errc() || end != r->data() + r->size() || refresh_ms < 10 || refresh_ms > 600'000)
            return refuse(
                log, instance.name,
                Error(Errc::kConfig, "QIM_USER_REGISTRY_REFRESH_MS='" + *r + "': expected 10..600000"));
        }
        users_follower =
            std::make_unique<UserRegistryFollower>(*users, std::chrono::milliseconds(refresh_ms));
        users_follower->start();
      }
    }
    auto bs = before_send_config_from_env(env);
    if (!bs.ok()) return refuse(log, instance.name, bs.error());
    if (*bs) {
      (*bs)->max_body_bytes = options->max_body_bytes;
      auto hook = make_http_before_send_hook(**bs);
      if (!hook.ok()) return refuse(log, instance.name, hook.error());
      before_send = std::move(hook).value();
      deps.before_send = before_send.get();
    }
    deps.outbox = &pipeline->outbox();
    deps.mailbox = &pipeline->store();
    deps.history = &pipeline->history();
    deps.groups = pipeline->groups();
    deps.messages = pipeline->messages();
    deps.lifecycle = cfg.lifecycle;
    deps.inbox = pipeline->inbox();
    auto attach_options = attachments::attachment_options_from_env(env);
    if (!attach_options.ok()) return refuse(log, instance.name, attach_options.error());
    deps.attachment_options = *attach_options;
    deps.objects = object_store.get();  // null: attachments are refused ATTACHMENTS_DISABLED
    if (object_store) {
      if (routing) {
        upload_budget = std::make_unique<attachments::RedisUploadBudget>(routing->redis());
      } else if (instance.alone) {
        // A gateway alone without routed delivery (pull) still shares the budget with the other gateways.
        auto ro = routing_options_from_env(env);
        if (!ro.ok()) return refuse(log, instance.name, ro.error());
        auto b = attachments::RedisUploadBudget::create(*ro);
        if (!b.ok()) return refuse(log, instance.name + ": the upload budget (QIM_ROUTING_REDIS)", b.error());
        upload_budget = std::move(b).value();
      } else {
        upload_budget = attachments::make_memory_upload_budget();
      }
      deps.upload_budget = upload_budget.get();
    }
    deps.clock = cfg.store.clock;
    deps.shard_count = cfg.shards;
    deps.signals = signal_bus.get();
    deps.presence = presence.get();
    deps.extra_metrics = [p = pipeline.get(), r = routing.get(), l = local_signals,
                          rs = routing ? static_cast<RedisSignalBus*>(signal_bus.get()) : nullptr,
                          dn = delivered.get(), hooks, pusher, sweeper = &orphan_sweeper] {
      return p->prometheus() + (hooks != nullptr ? hooks->prometheus() : std::string()) +
             (*sweeper != nullptr ? (*sweeper)->prometheus() : std::string()) +
             (pusher != nullptr ? pusher->prometheus() : std::string()) +
             (r != nullptr ? r->metrics_text() : std::string()) +
             (l != nullptr ? l->metrics_text() : std::string()) +
             (rs != nullptr ? rs->metrics_text() : std::string()) +
             (dn != nullptr ? dn->metrics_text() : std::string());
    };
    deps.admin_routes = pipeline_admin_routes(*pipeline);
    if (hooks != nullptr) {
      for (auto& r : webhook_admin_routes(*hooks)) deps.admin_routes.push_back(std::move(r));
    }
    for (auto& r : session_admin_routes(*sessions)) deps.admin_routes.push_back(std::move(r));
    deps.sessions = session_store.get();
    if (routing) deps.routes = &routing->registrar();
    gateway = make_gateway(*std::move(options), std::move(deps));
    if (local_signals != nullptr) local_signals->attach(&gateway->signal_sink());
    if (cfg.delivery_mode != "pull" && !instance.alone) pipeline->deliver_to(&gateway->notifier());
  }
  std::atomic<bool> fatal{false};
  pipeline->on_fatal([&fatal](const Error&) { fatal = true; });
  if (Status s = pipeline->start(); !s.ok()) {
    (void)pipeline->shutdown();
    return refuse(log, instance.name, s.error());
  }
  // The orphan sweep runs in gateway processes (QIM_ATTACH_SWEEP_INTERVAL_MS, an hour; a day-old upload is
  // its quarry).
  if (attachment_rules && instance.gateway)
    orphan_sweeper = std::make_unique<attachments::OrphanSweeper>(
        *attachment_rules, std::chrono::milliseconds(attachment_rules->options().sweep_interval_ms), log);
  // After fanout started: the consumer follows its committed position.
  if (hooks != nullptr) {
    if (Status s = hooks->start(); !s.ok()) {
      (void)pipeline->shutdown();
      return refuse(log, instance.name + ": the webhook consumer", s.error());
    }
  }
  if (pusher != nullptr) {
    if (Status s = pusher->start(); !s.ok()) {
      if (hooks != nullptr) hooks->stop();
      (void)pipeline->shutdown();
      return refuse(log, instance.name + ": the push consumer", s.error());
    }
  }
  if (leases) {
    leases->loop = std::make_unique<ShardOwnership>(*pipeline->node(), *leases->store, pipeline->store(),
                                                    leases->options);
    if (Status s = leases->loop->start(); !s.ok()) {
      leases->loop.reset();
      (void)pipeline->shutdown();
      return refuse(log, instance.name + ": the shard ownership loop", s.error());
    }
  }
  // A role without a gateway serves the gateway's admin endpoints from an admin server of its own.
  std::unique_ptr<RoleAdmin> admin;
  if (gateway) {
    // Subscribed before the first AUTH can come, so no push for a routed user is missed.
    if (routing) {
      if (redis_presence != nullptr) redis_presence->start();
      if (Status s = routing->start(gateway->notifier(), &gateway->signal_sink()); !s.ok()) {
        (void)pipeline->shutdown();
        return refuse(log, instance.name + ": the routing Redis (QIM_ROUTING_REDIS) does not answer",
                      s.error());
      }
    }
    if (Status s = gateway->start(); !s.ok()) {
      if (routing) routing->stop();
      (void)pipeline->shutdown();
      return refuse(log, instance.name + ": the gateway cannot start", s.error());
    }
    // The server API after the gateway (its start rebuilt the idempotency table both doors share).
    if (api_options) {
      api::ApiDeps ad;
      ad.outbox = &pipeline->outbox();
      ad.dedup = shared_dedup ? static_cast<SendDedup*>(shared_dedup.get()) : own_dedup.get();
      ad.history = &pipeline->history();
      ad.groups = pipeline->groups();
      ad.inbox = pipeline->inbox();
      ad.sessions = sessions.get();
      ad.messages = pipeline->messages();
      ad.lifecycle = cfg.lifecycle;  // the windows fanout decides by
      ad.before_send = before_send.get();
      ad.users = users.get();
      ad.attachments = gateway->attachments();  // the frames' rules, ids and budget (docs/adr/0165)
      ad.clock = cfg.store.clock;
      ad.auth_secret = gateway_options.auth_secret;
      ad.max_body_bytes = gateway_options.max_body_bytes;
      ad.group_max_members = gateway_options.group_max_members;
      ad.group_apply_wait_ms = gateway_options.group_apply_wait_ms;
      api_server = std::make_unique<api::ApiServer>(*api_options, std::move(ad));
      if (Status s = api_server->start(); !s.ok()) {
        gateway->stop();
        if (routing) routing->stop();
        (void)pipeline->shutdown();
        return refuse(log, instance.name + ": the server API cannot start", s.error());
      }
    }
  } else {
    admin = std::make_unique<RoleAdmin>(
        [p = pipeline.get(), n = routed_notifier.get(), l = leases ? leases->loop.get() : nullptr,
         ns = node_signals.get(), dn = delivered.get(), hooks, pusher] {
          return p->prometheus() + (hooks != nullptr ? hooks->prometheus() : std::string()) +
                 (pusher != nullptr ? pusher->prometheus() : std::string()) +
                 (n != nullptr ? n->metrics_text() : std::string()) +
                 (ns != nullptr ? ns->metrics_text() : std::string()) +
                 (dn != nullptr ? dn->metrics_text() : std::string()) +
                 (l != nullptr ? ownership_prometheus(l->metrics()) : std::string());
        },
        [&] {
          auto routes = pipeline_admin_routes(*pipeline);
          if (leases && leases->loop) {
            for (auto& r : ownership_admin_routes(*leases->loop)) routes.push_back(std::move(r));
          }
          if (hooks != nullptr) {
            for (auto& r : webhook_admin_routes(*hooks)) routes.push_back(std::move(r));
          }
          return routes;
        }());
    if (Status s = admin->start(cfg.admin_address, cfg.admin_port); !s.ok()) {
      (void)pipeline->shutdown();
      return refuse(log, instance.name + ": the admin server cannot start", s.error());
    }
  }
  RunningInstance running{::getpid(), gateway ? gateway->port() : uint16_t{0},
                          gateway ? gateway->admin_port() : admin->port(), cfg.epoch.value, cfg.shards};
  if (Status s = write_running_file(cfg.data_dir, running); !s.ok()) {
    log.warn("cannot write {}/running.json (operator commands will not find this instance): {}", cfg.data_dir,
             s.error().to_string());
  }
  print_banner(cfg, gateway.get(), gateway_options, admin.get(), dev_secret, dev_ca, instance.name);
  if (api_server) {
    fmt::print("  server API          {}://{}:{}/v1/   (docs/api.md; keys in {}: qim admin api-key create)\n",
               api_server->tls() ? "https" : "http", api_options->address, api_server->port(),
               api_options->keys_file);
    std::fflush(stdout);
  }
  if (before_send) {
    fmt::print("  before-send hook    {}   (docs/webhooks.md \"Before send\")\n",
               env("QIM_BEFORE_SEND_URL").value_or(""));
    std::fflush(stdout);
  }

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
  if (api_server) api_server->stop();  // no new API requests; those in flight are answered
  if (gateway) gateway->stop();
  if (before_send) before_send->stop();  // after both doors: their SENDs waiting on it were answered
  if (routing) routing->stop();          // its routes go with it (a killed gateway's expire)
  // Leased shards are given up gracefully (drained, committed, released) so the other nodes take them on
  // their next scan rather than after the lease ttl.
  if (leases && leases->loop) leases->loop->stop();
  Status drained = pipeline->shutdown();
  // Stopped after fanout's drain (its last commit lets the consumer see the last records) without waiting for
  // the hook: what it did not acknowledge is sent after the next start.
  if (hooks != nullptr) hooks->stop();
  if (pusher != nullptr) pusher->stop();  // sends the bursts still open
  delivered.reset();        // reported to last by the shutdown's flush; before the buses it sends on
  routed_notifier.reset();  // publishes what the node reported last, then stops
  node_signals.reset();
  if (local_signals != nullptr) local_signals->attach(nullptr);
  gateway.reset();     // after the pipeline stopped reporting to it
  signal_bus.reset();  // after the gateway that sent on it
  presence.reset();    // after the gateway whose connections watched
  if (redis_presence != nullptr) redis_presence->stop();
  presence_exchange.reset();
  if (admin) admin->stop();  // answered /healthz and /metrics through the drain
  remove_running_file(cfg.data_dir);
  if (leases) leases->loop.reset();  // before the node it adds shards to
  pipeline.reset();                  // flushes and closes the logs and stores
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
  const bool leased = role == "mailbox" && shard_leases_enabled(env);
  Instance instance{
      role == "gateway",
      PipelineRoles{role == "fanout", role == "mailbox", role == "archiver", leased,
                    /*groups=*/role == "gateway" || role == "fanout" || role == "webhooks" || role == "push",
                    /*inbox=*/role == "gateway" || role == "mailbox" || role == "push"},
      "qim " + role,
      true,
      role == "webhooks",
      role == "push"};
  return run_instance(env, instance);
}

}  // namespace qim
