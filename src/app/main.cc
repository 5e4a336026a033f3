// qim: the QIM server binary. `qim up` runs everything in one process; see docs/running.md.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <map>

#include "app/api_key_commands.h"
#include "app/commands.h"
#include "app/config.h"
#include "app/ops_cli.h"
#include "ctl/usage.h"

namespace {

// Adds `--name` to `cmd`; a value given overrides the environment variable `var`.
void env_flag(CLI::App* cmd, std::map<std::string, std::string>& overrides, const std::string& name,
              const std::string& var, const std::string& help) {
  cmd->add_option_function<std::string>(
      name, [&overrides, var](const std::string& v) { overrides[var] = v; },
      help + " (overrides " + var + ")");
}

void instance_flags(CLI::App* cmd, std::map<std::string, std::string>& o) {
  env_flag(cmd, o, "--data-dir", "QIM_DATA_DIR", "data directory");
  env_flag(cmd, o, "--store", "QIM_MAILBOX_STORE_BACKEND", "mailbox store backend");
  env_flag(cmd, o, "--shards", "QIM_SHARDS", "shard count");
  env_flag(cmd, o, "--outbox-partitions", "QIM_OUTBOX_PARTITIONS", "Outbox partitions");
  env_flag(cmd, o, "--owned-shards", "QIM_OWNED_SHARDS", "shards this node owns, e.g. 0-15");
  env_flag(cmd, o, "--epoch", "QIM_EPOCH", "ownership epoch of the owned shards");
  env_flag(cmd, o, "--delivery-mode", "QIM_DELIVERY_MODE", "hybrid, push or pull");
  env_flag(cmd, o, "--log-level", "QIM_LOG_LEVEL", "trace, debug, info, warn or error");
}

// What the operator commands on the store read: where it is and how it is sharded.
void store_flags(CLI::App* cmd, std::map<std::string, std::string>& o) {
  env_flag(cmd, o, "--data-dir", "QIM_DATA_DIR", "data directory");
  env_flag(cmd, o, "--store", "QIM_MAILBOX_STORE_BACKEND", "mailbox store backend");
  env_flag(cmd, o, "--shards", "QIM_SHARDS", "shard count");
}

void gateway_flags(CLI::App* cmd, std::map<std::string, std::string>& o) {
  env_flag(cmd, o, "--listen", "QIM_GATEWAY_LISTEN", "client listen address");
  env_flag(cmd, o, "--port", "QIM_GATEWAY_PORT", "client port (0: any free port)");
  env_flag(cmd, o, "--admin-port", "QIM_ADMIN_PORT", "admin port (0: any free port)");
}

}  // namespace

int main(int argc, char** argv) {
  auto logger =
      std::make_shared<spdlog::logger>("qim", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%-5l%$ [%n] %v");
  spdlog::set_default_logger(logger);

  CLI::App app{
      "qim: an instant-messaging backend around the ADR-0022 mailbox store.\n"
      "Configuration comes from QIM_* environment variables; flags override them (docs/running.md)."};
  app.require_subcommand(1);
  std::map<std::string, std::string> overrides;

  auto* up = app.add_subcommand("up", "run every role in one process (embedded log and store by default)");
  instance_flags(up, overrides);
  gateway_flags(up, overrides);
  up->add_flag_callback(
      "--dev-tls", [&overrides] { overrides["QIM_DEV_TLS"] = "1"; },
      "serve wss:// with a self-signed development certificate kept in <data dir>/tls (sets QIM_DEV_TLS=1)");

  std::string role;
  CLI::App* dead_letters = nullptr;
  CLI::App* dead_list = nullptr;
  qim::DeadLetterRequest dead_request;
  for (const char* r : {"gateway", "fanout", "mailbox", "archiver", "webhooks", "push"}) {
    auto* cmd =
        app.add_subcommand(r, std::string("run the ") + r + " role alone (needs a shared log: Kafka)");
    instance_flags(cmd, overrides);
    if (std::string(r) == "gateway") {
      gateway_flags(cmd, overrides);
    } else {
      env_flag(cmd, overrides, "--admin-port", "QIM_ADMIN_PORT", "admin port (0: any free port)");
    }
    if (std::string(r) == "webhooks") {
      // `qim webhooks dead-letters list|replay`: the dead letters of the instance in the data directory.
      dead_letters =
          cmd->add_subcommand("dead-letters", "list or replay the webhook's dead letters (docs/webhooks.md)");
      dead_list = dead_letters->add_subcommand("list", "list the dead letters and the replay cursor");
      auto* replay =
          dead_letters->add_subcommand("replay", "send the dead letters again, from the cursor on");
      replay->add_option("--from", dead_request.from,
                         "dead-letter position to start at (default: the cursor)");
      for (auto* c : {dead_list, replay}) instance_flags(c, overrides);
      dead_letters->require_subcommand(1);
    }
    cmd->callback([&role, r] { role = r; });
  }

  qim::TokenRequest token;
  auto* tok =
      app.add_subcommand("token", "print a development access token signed with the instance's secret");
  tok->add_option("--user", token.user, "user id: 1..64 bytes of [A-Za-z0-9_.@-]")->required();
  tok->add_option("--device", token.device, "device id: 1..64 bytes of [A-Za-z0-9_.@-]")
      ->capture_default_str();
  tok->add_option("--ttl", token.ttl_seconds, "seconds until it expires")
      ->capture_default_str()
      ->check(CLI::Range(1, 365 * 86400));
  env_flag(tok, overrides, "--data-dir", "QIM_DATA_DIR", "data directory holding auth-secret");

  qim::ReplayRequest replay;
  auto* rep = app.add_subcommand(
      "replay-fanout", "make fanout replay the Outbox from an earlier offset (running or stopped instance)");
  rep->add_option("--from", replay.from, "first Outbox offset to replay")->required();
  rep->add_option("--partition", replay.partitions, "Outbox partition(s); default all");
  instance_flags(rep, overrides);

  auto* status =
      app.add_subcommand("status", "positions, frontiers and lag of an instance (running or stopped)");
  instance_flags(status, overrides);

  qim::QuarantineRequest quarantine;
  auto* quar = app.add_subcommand(
      "quarantine",
      "the mailbox-log records the node refused and the Outbox records fanout refused (running or stopped)");
  quar->require_subcommand(1);
  auto* quar_list = quar->add_subcommand("list", "list the quarantined records");
  auto* quar_show = quar->add_subcommand("show", "show one quarantined record with its raw bytes");
  uint64_t position = 0;
  quar_show->add_option("position", position, "its position on the quarantine log (from list)")->required();
  for (auto* c : {quar_list, quar_show}) {
    c->add_flag("--json", quarantine.json, "print JSON");
    instance_flags(c, overrides);
  }

  // Operator commands on the mailbox store (docs/operations.md).
  const qim::OpsCli ops(app, [&overrides](CLI::App* cmd) { store_flags(cmd, overrides); });

  // The server API's keys (docs/api.md "Keys").
  qim::ApiKeyRequest api_key;
  auto* api_keys =
      app.get_subcommand("admin")->add_subcommand("api-key", "create, list and revoke server API keys");
  api_keys->require_subcommand(1);
  auto* key_create = api_keys->add_subcommand("create", "make a key; prints it once (only its hash is kept)");
  key_create->add_option("--scopes", api_key.scopes, "send,groups,read,tokens,users or all")->required();
  key_create->add_option("--label", api_key.label, "what the key is for");
  auto* key_list = api_keys->add_subcommand("list", "list the keys (id, scopes, live or revoked, label)");
  key_list->add_flag("--json", api_key.json, "print JSON lines");
  auto* key_revoke = api_keys->add_subcommand("revoke", "revoke a key: refused from the next request on");
  key_revoke->add_option("id", api_key.id, "the key's id (12 hex digits, from list)")->required();
  for (auto* c : {key_create, key_list, key_revoke}) {
    env_flag(c, overrides, "--data-dir", "QIM_DATA_DIR", "data directory holding api-keys");
    env_flag(c, overrides, "--keys-file", "QIM_API_KEYS_FILE", "the key file (default <data dir>/api-keys)");
  }

  // A mistyped command gets the list of commands, not CLI11's "The following argument was not expected".
  if (auto unknown = qim::ctl::unknown_command(app, "qim", argc, argv)) {
    std::fputs(unknown->c_str(), stderr);
    return static_cast<int>(CLI::ExitCodes::ExtrasError);
  }
  CLI11_PARSE(app, argc, argv);
  const qim::EnvLookup env = qim::with_overrides(qim::process_env(), overrides);
  if (up->parsed()) return qim::run_up(env);
  if (dead_letters != nullptr && dead_letters->parsed()) {
    dead_request.replay = !dead_list->parsed();
    return qim::run_dead_letters(env, dead_request);
  }
  if (!role.empty()) return qim::run_role(role, env);
  if (tok->parsed()) return qim::run_token(env, token);
  if (rep->parsed()) return qim::run_replay_fanout(env, replay);
  if (status->parsed()) return qim::run_status(env);
  if (auto code = ops.run(env)) return *code;
  if (api_keys->parsed()) {
    api_key.action = key_create->parsed() ? "create" : key_list->parsed() ? "list" : "revoke";
    return qim::run_api_key(env, api_key);
  }
  if (quar->parsed()) {
    if (quar_show->parsed()) quarantine.show = position;
    return qim::run_quarantine(env, quarantine);
  }
  return qim::kExitRefused;
}
