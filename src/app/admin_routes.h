#pragma once
// The pipeline's endpoints on the gateway's admin server (loopback only):
//   POST /admin/fanout/replay?offset=N[&partition=P]   replay the Outbox from N (one partition or all)
//   GET  /admin/pipeline                                per-shard frontier, pages, lag; fanout; archiver
//   (JSON)
//   GET  /admin/quarantine[?position=N][&json=1]        the quarantined records (`qim quarantine`)

#include <string>
#include <vector>

#include "app/pipeline.h"
#include "gateway/gateway.h"

namespace qim {

// At most this many quarantine-log records are read for one listing.
inline constexpr size_t kQuarantineReadMax = 100'000;

std::vector<AdminRoute> pipeline_admin_routes(Pipeline& pipeline);

// The JSON body of GET /admin/pipeline.
std::string pipeline_json(Pipeline& pipeline);

// The value of `key` in a query string "a=1&b=2", nullopt if absent.
std::optional<std::string> query_param(const std::string& query, const std::string& key);

}  // namespace qim
