#pragma once
// The checks of `qim audit dispatch` (docs/operations.md), over whatever an AuditReader walks:
//   identity_conflict   one dispatch id of one shard with different digests or manifests across epochs
//                       (the split-brain case ADR-0022 leaves to this audit)
//   entry_seq_mismatch  an entry whose offset is not its dispatch's canonical offset at the entry's epoch
//   identity_writetime  an identity row whose WRITETIME is not 2^48-1-canonical_offset (CQL)
//   identity_ttl        an identity row with no TTL, or one above DISPATCH_IDENTITY_TTL_SECONDS
//   frontier_writetime  a frontier row whose WRITETIME is not its offset (CQL)
//   corrupt_row         a row the reader could not decode (on redis: a packed watermark whose lanes
//                       differ or whose epoch is not the lanes' one)
// Besides findings the report counts what it walked and two things that are expected and not
// inconsistencies: entries with no identity row at their epoch (the identity's 31-day TTL ran out first,
// or the dispatch id is not fanout's "m<message>-s<shard>") and entries above their epoch's frontier
// (written by an owner that lost the shard or crashed before advancing; readers never show them).
//
// Memory: the identities of the audited shards are held while entries are walked (a few dozen bytes
// each); audit a shard at a time (--shard) on very large stores.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/sharding.h"
#include "core/status.h"
#include "mailbox/audit_reader.h"

namespace qim {

enum class AuditFindingKind {
  kIdentityConflict,
  kEntrySeqMismatch,
  kIdentityWritetime,
  kIdentityTtl,
  kFrontierWritetime,
  kCorruptRow,
};
std::string_view audit_finding_name(AuditFindingKind kind);

struct AuditFinding {
  AuditFindingKind kind;
  std::optional<ShardId> shard;
  std::optional<Epoch> epoch;
  std::string dispatch_id;  // empty if none
  std::string user;         // empty if none
  std::string detail;       // what was found against what was expected
};

struct AuditCounts {
  uint64_t frontier_rows = 0;
  uint64_t identity_rows = 0;
  uint64_t entry_rows = 0;
  uint64_t entries_without_identity = 0;
  uint64_t entries_above_frontier = 0;
};

struct AuditReport {
  std::string backend;
  std::vector<ShardId> shards;  // audited; empty: all
  std::vector<std::string> notes;
  AuditCounts counts;
  std::vector<AuditFinding> findings;  // ordered by kind, shard, dispatch id, epoch, user
};

struct AuditRequest {
  ShardMap shard_map = *ShardMap::create(1);
  std::vector<ShardId> shards;  // empty: every shard
  uint32_t rows_per_second = 2000;
  RowPacer::Progress progress;  // may be empty
};

// Walks frontiers, identities and entries through `reader` and runs every check. The report is returned
// even when it holds findings; errors are for walks that could not finish (Transport, Timeout, ...).
Result<AuditReport> audit_dispatch(AuditReader& reader, const AuditRequest& request);

// The human table (one line per finding, then the counts and notes) and the JSON document
// {"backend":..,"shards":[..],"clean":bool,"counts":{..},"notes":[..],"findings":[{kind,shard,epoch,
// dispatch_id,user,detail}]}.
std::string render_audit_table(const AuditReport& report);
std::string render_audit_json(const AuditReport& report);

}  // namespace qim
