#pragma once
// `qim admin sessions list USER` and `qim admin sessions revoke USER [--device D]` (docs/operations.md
// "Sessions"). Where they act, first that answers:
//   1. --admin-port: that gateway's admin server (GET /admin/sessions, POST /admin/sessions/revoke);
//   2. the `qim up` (or `qim gateway`) running in --data-dir (its running.json): its admin server;
//   3. QIM_ROUTING_REDIS set (a distributed deployment): the routing Redis itself, the revocation pushed to
//      the user's gateways through it (not with QIM_TEST_SESSIONS_NO_PUSH=1, a test knob: the gateways'
//      catch-up alone closes the live connections then);
//   4. the data directory of a stopped `qim up`: its sessions file (read at its next start).

#include <cstdint>
#include <optional>
#include <string>

#include "app/commands.h"

namespace qim {

struct SessionsCommand {
  std::string user;
  std::string device;  // revoke: empty for every session of the user
  bool json = false;   // list
  uint16_t admin_port = 0;
};

// Exit codes: 0 done; kExitRefused (2) for a bad user or device or no instance found; kExitFailed (1) when
// the admin server or the store cannot be reached.
int run_sessions_list(const EnvLookup& env, const SessionsCommand& command);
int run_sessions_revoke(const EnvLookup& env, const SessionsCommand& command);

}  // namespace qim
