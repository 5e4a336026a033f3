#pragma once
// The pipeline's endpoints on the gateway's admin server (loopback only):
//   POST /admin/fanout/replay?offset=N[&partition=P]   replay the Outbox from N (one partition or all)
//   POST /admin/archiver/replay?offset=N&partition=P    archive partition P again from N
//   GET  /admin/pipeline                                per-shard frontier, pages, lag; fanout; archiver
//   (JSON)
//   GET  /admin/quarantine[?position=N][&json=1]        the quarantined records (`qim quarantine`)
// and, on a `qim mailbox` whose shards come from leases:
//   POST /admin/shards/clear?shard=N                    restart a shard stopped on a fatal error
//   GET  /admin/shards                                   the leases held and the shards stopped
// Every one of them needs the admin header (gateway/admin_server.h).

#include <string>
#include <vector>

#include "app/pipeline.h"
#include "gateway/gateway.h"
#include "node/lease/shard_ownership.h"

namespace qim {

// At most this many quarantine-log records are read for one listing.
inline constexpr size_t kQuarantineReadMax = 100'000;

std::vector<AdminRoute> pipeline_admin_routes(Pipeline& pipeline);

// The ownership loop's routes (`qim admin shard clear`): POST /admin/shards/clear?shard=N answers 200, 404
// if the shard is not stopped on this node, 400 for a malformed shard; GET /admin/shards the held
// leases and the stopped shards with their errors (text).
std::vector<AdminRoute> ownership_admin_routes(ShardOwnership& loop);

// The JSON body of GET /admin/pipeline.
std::string pipeline_json(Pipeline& pipeline);

// The value of `key` in a query string "a=1&b=2", nullopt if absent.
std::optional<std::string> query_param(const std::string& query, const std::string& key);

}  // namespace qim
