#pragma once
// The `qim` subcommands. Each returns the process exit code:
//   0  done (a clean shutdown after SIGINT/SIGTERM included)
//   1  failed while running (I/O, a shard worker stopped, a drain that timed out)
//   2  refused to start: bad configuration, or a store epoch above the configured one (fail closed)

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mailbox/store_options.h"

namespace qim {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitRefused = 2;

// Every role in one process on the configured log and store, with the gateway.
int run_up(const EnvLookup& env);
// One role alone ("gateway", "fanout", "mailbox", "archiver"): needs a log several processes can share.
int run_role(const std::string& role, const EnvLookup& env);

struct TokenRequest {
  std::string user;
  std::string device = "d1";
  int64_t ttl_seconds = 3600;
};
// Prints a token signed with QIM_AUTH_SECRET or the data directory's dev secret.
int run_token(const EnvLookup& env, const TokenRequest& request);

struct ReplayRequest {
  uint64_t from = 0;
  std::vector<uint32_t> partitions;  // empty: all
};
// Makes fanout replay the Outbox from `from`: through the admin server of a running `qim up`, else by
// rewinding the fanout group's committed positions so the next start replays.
int run_replay_fanout(const EnvLookup& env, const ReplayRequest& request);

// Prints positions and frontiers: from the running instance's admin server, else from the data directory.
int run_status(const EnvLookup& env);

struct QuarantineRequest {
  std::optional<uint64_t> show;  // a quarantine-log position: show that record; unset: list them all
  bool json = false;
};
// Lists (or shows one of) the mailbox-log records the node refused and the Outbox records fanout refused,
// both quarantined: through the admin server of a running `qim up`, else from the data directory's
// quarantine log. Like `qim status`, refuses
// a directory with no instance (NotFound, exit 1, nothing created); NotFound too for a position that holds
// no record.
int run_quarantine(const EnvLookup& env, const QuarantineRequest& request);

struct DeadLetterRequest {
  bool replay = false;  // false: list
  std::optional<uint64_t> from;
};
// Lists or replays the event webhook's dead letters (docs/webhooks.md) through the admin server of the
// instance running in the data directory (`qim up` with QIM_WEBHOOK_URL, or `qim webhooks`). NotFound
// (exit 1) without a running instance; exit 1 too when a replay stopped at a dead letter the hook refused.
int run_dead_letters(const EnvLookup& env, const DeadLetterRequest& request);

}  // namespace qim
