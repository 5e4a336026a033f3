// Operator commands: `qim token`, `qim replay-fanout`, `qim status`, `qim quarantine`.
#include <signal.h>
#include <spdlog/spdlog.h>

#include <filesystem>

#include "app/admin_client.h"
#include "app/admin_routes.h"
#include "app/commands.h"
#include "app/config.h"
#include "app/instance_files.h"
#include "app/pipeline.h"
#include "app/quarantine_view.h"
#include "auth/token.h"
#include "fanout/fanout.h"

namespace qim {

namespace {

int fail(const std::string& what, const Error& e) {
  fmt::print(stderr, "{}: {}\n", what, e.to_string());
  return e.code() == Errc::kConfig || e.code() == Errc::kInvalidArgument ? kExitRefused : kExitFailed;
}

// Operator commands look at an instance; they never create one where there is none. A log several
// processes share (Kafka) lives in its brokers, not in this directory: there the log itself is opened.
Status check_instance_exists(const AppConfig& config) {
  if (log_is_single_process(config.log) && !std::filesystem::exists(config.data_dir + "/outbox-log/META")) {
    return Error(Errc::kNotFound, "no QIM instance in " + config.data_dir + " (QIM_DATA_DIR / --data-dir)");
  }
  return {};
}

// The running `qim up` of this data directory, if its running.json names a live process.
std::optional<RunningInstance> running_instance(const std::string& data_dir) {
  auto running = read_running_file(data_dir);
  if (!running.ok() || !*running) return std::nullopt;
  if (::kill(static_cast<pid_t>((*running)->pid), 0) != 0) return std::nullopt;  // left over from a crash
  return **running;
}

}  // namespace

int run_token(const EnvLookup& env, const TokenRequest& request) {
  auto config = app_config_from_env(env);
  if (!config.ok()) return fail("qim token", config.error());
  std::string secret;
  if (auto s = env("QIM_AUTH_SECRET")) {
    secret = *s;
  } else {
    auto stored = load_dev_secret(config->data_dir);
    if (!stored.ok()) return fail("qim token", stored.error());
    if (!*stored) {
      return fail("qim token",
                  Error(Errc::kConfig, "QIM_AUTH_SECRET is not set and " + config->data_dir +
                                           "/auth-secret does not exist: run `qim up` once on this "
                                           "data directory, or set QIM_AUTH_SECRET"));
    }
    secret = **stored;
  }
  auto user = UserId::parse(request.user);
  if (!user.ok()) return fail("qim token --user", user.error());
  auto device = DeviceId::parse(request.device);
  if (!device.ok()) return fail("qim token --device", device.error());
  auto token = mint_token(secret, *user, *device, request.ttl_seconds * 1000, *config->store.clock);
  if (!token.ok()) return fail("qim token", token.error());
  fmt::print("{}\n", *token);
  return kExitOk;
}

int run_replay_fanout(const EnvLookup& env, const ReplayRequest& request) {
  auto config = app_config_from_env(env);
  if (!config.ok()) return fail("qim replay-fanout", config.error());
  if (auto running = running_instance(config->data_dir)) {
    std::vector<std::string> targets;
    if (request.partitions.empty())
      targets.push_back("/admin/fanout/replay?offset=" + std::to_string(request.from));
    for (uint32_t p : request.partitions) {
      targets.push_back("/admin/fanout/replay?offset=" + std::to_string(request.from) +
                        "&partition=" + std::to_string(p));
    }
    for (const auto& target : targets) {
      auto body = admin_request(running->admin_port, "POST", target);
      if (!body.ok())
        return fail("qim replay-fanout (running instance, pid " + std::to_string(running->pid) + ")",
                    body.error());
      fmt::print("{}", *body);
    }
    return kExitOk;
  }
  if (Status s = check_instance_exists(*config); !s.ok()) return fail("qim replay-fanout", s.error());
  auto outbox = open_log(config->log, "outbox", config->outbox_partitions, nullptr, config->store.clock,
                         config->store.outbox_retention());
  if (!outbox.ok()) return fail("qim replay-fanout: opening the outbox log", outbox.error());
  // The repeated-sends window is fanout's (the pipeline's default: outbox/repeated_sends.h).
  const ReplayLimit limit{config->store.clock->now_ms(), config->store.outbox_retention(), RepeatWindow{}};
  auto positions = rewind_fanout(**outbox, request.partitions, Offset{request.from}, kFanoutGroup, limit);
  if (!positions.ok()) return fail("qim replay-fanout", positions.error());
  for (const auto& p : *positions) {
    fmt::print("outbox partition {}: fanout will replay from offset {} ({} records) at the next start\n",
               p.partition, p.next.value, p.lag);
  }
  return kExitOk;
}

int run_status(const EnvLookup& env) {
  auto config = app_config_from_env(env);
  if (!config.ok()) return fail("qim status", config.error());
  if (auto running = running_instance(config->data_dir)) {
    auto body = admin_request(running->admin_port, "GET", "/admin/pipeline");
    if (!body.ok()) return fail("qim status (running instance)", body.error());
    fmt::print("running: pid {}, gateway port {}, admin port {}, epoch {}\n{}", running->pid,
               running->gateway_port, running->admin_port, running->epoch, *body);
    return kExitOk;
  }
  if (Status s = check_instance_exists(*config); !s.ok()) return fail("qim status", s.error());
  auto opened = Pipeline::open(
      *config, PipelineRoles{.fanout = false, .node = false, .archiver = false, .inbox = false}, nullptr);
  if (!opened.ok()) return fail("qim status: opening " + config->data_dir, opened.error());
  Pipeline& p = **opened;
  fmt::print("stopped instance in {} ({} store)\n", config->data_dir, config->store.backend);
  fmt::print("outbox partition   end  fanout  archiver\n");
  for (uint32_t part = 0; part < p.outbox().partition_count(); ++part) {
    auto pos = [&](const char* group) {
      auto c = p.outbox().committed(group, part);
      return c.ok() && *c ? std::to_string((*c)->value) : std::string("-");
    };
    fmt::print("{:>16} {:>5} {:>7} {:>9}\n", part, p.outbox().end_offset(part)->value, pos(kFanoutGroup),
               pos(kArchiverGroup));
  }
  fmt::print("shard   log end  node position  frontier (epoch:offset)\n");
  for (uint32_t shard = 0; shard < p.mailbox_log().partition_count(); ++shard) {
    auto committed = p.mailbox_log().committed(kMailboxGroup, shard);
    auto frontier = p.store().lane_watermarks(ShardId{shard}, Epoch{kMaxEpoch});
    fmt::print("{:>5} {:>9} {:>14}  {}\n", shard, p.mailbox_log().end_offset(shard)->value,
               committed.ok() && *committed ? std::to_string((*committed)->value) : std::string("-"),
               frontier.ok() ? (*frontier)[0].to_string() : frontier.error().to_string());
  }
  return kExitOk;
}

int run_quarantine(const EnvLookup& env, const QuarantineRequest& request) {
  const char* what = request.show ? "qim quarantine show" : "qim quarantine list";
  auto config = app_config_from_env(env);
  if (!config.ok()) return fail(what, config.error());
  if (auto running = running_instance(config->data_dir)) {
    std::string target = "/admin/quarantine?json=" + std::string(request.json ? "1" : "0");
    if (request.show) target += "&position=" + std::to_string(*request.show);
    auto body = admin_request(running->admin_port, "GET", target);
    if (!body.ok()) {
      // The admin server answers 404 for a position without a record: NotFound, as for a stopped instance.
      Error e = body.code() == Errc::kInvalidArgument && request.show
                    ? Error(Errc::kNotFound, body.error().message())
                    : body.error();
      return fail(std::string(what) + " (running instance)", e);
    }
    fmt::print("{}", *body);
    return kExitOk;
  }
  if (Status s = check_instance_exists(*config); !s.ok()) return fail(what, s.error());
  auto log = open_log(config->log, kQuarantineLogName, kQuarantinePartitions, nullptr, config->store.clock);
  if (!log.ok()) return fail(std::string(what) + ": opening the quarantine log", log.error());
  auto entries = read_quarantine(**log, Offset{0}, kQuarantineReadMax);
  if (!entries.ok()) return fail(what, entries.error());
  if (!request.show) {
    fmt::print("{}", render_quarantine_list(*entries, request.json));
    return kExitOk;
  }
  auto shown = render_quarantine_show(*entries, *request.show, request.json);
  if (!shown.ok()) return fail(what, shown.error());
  fmt::print("{}", *shown);
  return kExitOk;
}

}  // namespace qim

namespace qim {

int run_dead_letters(const EnvLookup& env, const DeadLetterRequest& request) {
  const char* what = request.replay ? "qim webhooks dead-letters replay" : "qim webhooks dead-letters list";
  auto config = app_config_from_env(env);
  if (!config.ok()) return fail(what, config.error());
  auto running = running_instance(config->data_dir);
  if (!running) {
    return fail(what,
                Error(Errc::kNotFound, "no running instance in " + config->data_dir +
                                           " (QIM_DATA_DIR / --data-dir): the dead letters are listed and "
                                           "replayed by the process that runs the webhook"));
  }
  std::string target = "/admin/webhooks/dead-letters";
  if (request.replay) {
    target += "/replay";
    if (request.from) target += "?from=" + std::to_string(*request.from);
  }
  auto body = admin_request(running->admin_port, request.replay ? "POST" : "GET", target);
  if (!body.ok()) return fail(what, body.error());
  fmt::print("{}", *body);
  return kExitOk;
}

}  // namespace qim
