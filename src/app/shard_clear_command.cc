// `qim admin shard clear` (shard_clear_command.h).
#include "app/shard_clear_command.h"

#include <fmt/format.h>
#include <signal.h>

#include "app/admin_client.h"
#include "app/config.h"
#include "app/instance_files.h"

namespace qim {

int run_shard_clear(const EnvLookup& env, const ShardClearCommand& command) {
  constexpr const char* kWhat = "qim admin shard clear";
  uint16_t port = command.admin_port;
  if (port == 0) {
    auto config = app_config_from_env(env);
    if (!config.ok()) {
      fmt::print(stderr, "{}: {}\n", kWhat, config.error().to_string());
      return kExitRefused;
    }
    auto running = read_running_file(config->data_dir);
    if (!running.ok() || !*running || ::kill(static_cast<pid_t>((*running)->pid), 0) != 0) {
      fmt::print(stderr,
                 "{}: no running node in {} (give --data-dir of the node that holds the shard, or "
                 "--admin-port)\n",
                 kWhat, config->data_dir);
      return kExitRefused;
    }
    port = (*running)->admin_port;
  }
  auto body = admin_request(port, "POST", "/admin/shards/clear?shard=" + std::to_string(command.shard));
  if (!body.ok()) {
    if (body.error().message().starts_with("not found: /admin/shards/clear")) {
      fmt::print(stderr,
                 "{}: the process on admin port {} does not own shards through leases (a `qim mailbox` "
                 "with QIM_OWNED_SHARDS unset or auto does)\n",
                 kWhat, port);
      return kExitRefused;
    }
    fmt::print(stderr, "{}: {}\n", kWhat, body.error().to_string());
    return body.code() == Errc::kInvalidArgument ? kExitRefused : kExitFailed;
  }
  fmt::print("{}", *body);
  return kExitOk;
}

}  // namespace qim
