#pragma once
// `qim admin shard move N --to NODE` (docs/operations.md): a planned hand-over of a leased shard at the
// next epoch, through the deployment's lease store (LeaseStore::request_move). The current owner gives
// the shard up at its next scan (its page in progress finishes, the frontier is committed, then the lease
// is released), NODE takes it at a new epoch; nobody else may take it meanwhile.

#include <chrono>
#include <cstdint>
#include <string>

#include "app/commands.h"

namespace qim {

struct ShardMoveCommand {
  uint32_t shard = 0;
  std::string to;                    // the target's QIM_NODE_ID; it must be live (heartbeating)
  std::chrono::seconds timeout{60};  // how long the move stays pending, and the wait for it
  bool wait = true;                  // false (--no-wait): return once the move is recorded
};

// Exit codes: 0 when NODE owns the shard (or the move is recorded, with --no-wait; or NODE already owned
// it); kExitRefused (2) for an unknown shard, a target that is not a live node, a move already pending,
// a deployment without leases (embedded store, static QIM_OWNED_SHARDS); kExitFailed (1) when the lease
// store cannot be reached, or the move did not complete within the timeout (it is then withdrawn, and
// the message says where the shard stands). Progress goes to stderr, the result to stdout.
int run_shard_move(const EnvLookup& env, const ShardMoveCommand& command);

}  // namespace qim
