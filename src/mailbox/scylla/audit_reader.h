#pragma once
// The scylla AuditReader (mailbox/audit_reader.h): paged full scans of mailbox_shard_frontier,
// mailbox_dispatch and mailbox_entry with WRITETIME and TTL, at the store's consistency (QUORUM). The
// identity table is partitioned by (shard, epoch, dispatch_id), so a --shard audit still scans it whole
// and filters in the client (no ALLOW FILTERING on the cluster); entries likewise (partitioned by user).
// Reads only: never creates the keyspace or a table.

#include <memory>

#include "mailbox/audit_reader.h"
#include "mailbox/scylla/scylla_backend.h"

namespace qim {

// Connects to config.hosts. Transport if no host answers; NotFound if the keyspace or one of the tables
// does not exist (nothing to audit, and nothing is created).
Result<std::unique_ptr<AuditReader>> open_scylla_audit_reader(const ScyllaConfig& config);

}  // namespace qim
