#pragma once
// The redis AuditReader (mailbox/audit_reader.h). Identity there is first-writer-wins inside one Lua
// script, so two owners can never store two payloads for one (shard, epoch, id); the audit still compares
// epochs, and checks what redis has instead of WRITETIME: each shard's packed watermark (every lane equal,
// the recorded epoch the lanes' own; packed_watermarks.h), its per-epoch history (wh:), the identity
// TTLs, and every entry against its dispatch's canonical offset.
// Walks keys with SCAN (COUNT = the pacer's page), one instance at a time. Reads only.

#include <memory>
#include <string>
#include <vector>

#include "core/sharding.h"
#include "mailbox/audit_reader.h"

namespace qim {

// Connects to every endpoint ("host:port"). Config for a malformed endpoint; Transport or Timeout naming
// the instance that cannot be reached.
Result<std::unique_ptr<AuditReader>> open_redis_audit_reader(const std::vector<std::string>& endpoints,
                                                             const std::string& key_prefix,
                                                             const ShardMap& shards);

}  // namespace qim
