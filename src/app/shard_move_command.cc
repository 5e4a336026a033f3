// `qim admin shard move` (shard_move_command.h).
#include "app/shard_move_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "app/config.h"
#include "node/lease/lease_config.h"

namespace qim {

namespace {

constexpr const char* kWhat = "qim admin shard move";

int refuse(const std::string& message) {
  fmt::print(stderr, "{}: {}\n", kWhat, message);
  return kExitRefused;
}

int fail(const Error& e) {
  fmt::print(stderr, "{}: {}\n", kWhat, e.to_string());
  return e.code() == Errc::kConfig || e.code() == Errc::kInvalidArgument || e.code() == Errc::kInvariant
             ? kExitRefused
             : kExitFailed;
}

std::string state_of(const ShardLease& l) {
  std::string s = l.free() ? fmt::format("free at epoch {}", l.epoch.value)
                           : fmt::format("owned by {} at epoch {}", l.owner, l.epoch.value);
  if (!l.moving_to.empty()) s += ", moving to " + l.moving_to;
  return s;
}

}  // namespace

int run_shard_move(const EnvLookup& env, const ShardMoveCommand& command) {
  auto config = app_config_from_env(env);
  if (!config.ok()) return fail(config.error());
  if (command.shard >= config->shards)
    return refuse(fmt::format("unknown shard {} (QIM_SHARDS is {}: 0..{})", command.shard, config->shards,
                              config->shards - 1));
  if (command.to.empty()) return refuse("--to: give the QIM_NODE_ID of the node to move the shard to");
  if (command.timeout.count() < 1) return refuse("--timeout: at least 1 second");
  auto leases = open_lease_store(config->store);
  if (!leases.ok()) {
    if (leases.code() == Errc::kConfig)
      return refuse("this deployment has no shard leases to move (" + leases.error().message() + ")");
    return fail(leases.error());
  }
  LeaseStore& store = **leases;
  auto live = store.live_nodes();
  if (!live.ok()) return fail(live.error());
  if (std::find(live->begin(), live->end(), command.to) == live->end()) {
    std::string names;
    for (const auto& n : *live) names += (names.empty() ? "" : ", ") + n;
    return refuse(fmt::format("node '{}' is not a live MailboxNode (live: {})", command.to,
                              names.empty() ? "none" : names));
  }
  const ShardId shard{command.shard};
  auto before = store.list(config->shards);
  if (!before.ok()) return fail(before.error());
  const ShardLease from = (*before)[shard.value];
  if (from.owner == command.to) {
    fmt::print("shard {} is already owned by {} at epoch {}\n", shard.value, command.to, from.epoch.value);
    return kExitOk;
  }
  if (Status s = store.request_move(shard, command.to, command.timeout); !s.ok()) return fail(s.error());
  fmt::print(stderr, "shard {}: {}; moving to {} (pending for {} s)\n", shard.value, state_of(from),
             command.to, command.timeout.count());
  if (!command.wait) {
    fmt::print("shard {}: move to {} recorded; it completes at the owner's and the target's next scans\n",
               shard.value, command.to);
    return kExitOk;
  }

  // Polls the lease until the target holds it at a new epoch; prints each change of state.
  const auto deadline = std::chrono::steady_clock::now() + command.timeout;
  std::string last = state_of(from);
  ShardLease now = from;
  while (true) {
    auto listed = store.list(config->shards);
    if (listed.ok()) {
      now = (*listed)[shard.value];
      if (now.owner == command.to && now.epoch > from.epoch) break;
      if (const std::string s = state_of(now); s != last) {
        fmt::print(stderr, "shard {}: {}\n", shard.value, s);
        last = s;
      }
    } else {
      fmt::print(stderr, "shard {}: cannot read the lease ({}); still waiting\n", shard.value,
                 listed.error().to_string());
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      const Status cancelled = store.cancel_move(shard, command.to);
      fmt::print(
          stderr, "{}: shard {} not moved to {} within {} s: {}; {}\n", kWhat, shard.value, command.to,
          command.timeout.count(), state_of(now),
          cancelled.ok() ? "the move is withdrawn" : "withdrawing it: " + cancelled.error().to_string());
      return kExitFailed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  fmt::print("shard {}: moved from {} (epoch {}) to {} (epoch {})\n", shard.value,
             from.owner.empty() ? std::string("nobody") : from.owner, from.epoch.value, command.to,
             now.epoch.value);
  return kExitOk;
}

}  // namespace qim
