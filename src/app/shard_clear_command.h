#pragma once
// `qim admin shard clear N` (docs/operations.md, "A shard stopped on a fatal error"): restarts the worker
// of a leased shard that stopped on a fatal error. The node that holds the shard kept its lease (so no node
// retook it at a new epoch) and writes nothing to it until this command; its worker then restarts at the
// same epoch at the node's next scan. Sent to that node's admin port (POST /admin/shards/clear), found in
// the running.json of its data directory or given with --admin-port.

#include <cstdint>

#include "app/commands.h"

namespace qim {

struct ShardClearCommand {
  uint32_t shard = 0;
  uint16_t admin_port = 0;  // 0: the running node of QIM_DATA_DIR (--data-dir)
};

// Exit codes: 0 cleared; kExitRefused (2) when the shard is not stopped on that node, or no node runs in
// the data directory; kExitFailed (1) when the admin port cannot be reached.
int run_shard_clear(const EnvLookup& env, const ShardClearCommand& command);

}  // namespace qim
