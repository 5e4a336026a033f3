#pragma once
// The group store on CQL (ScyllaDB / Apache Cassandra), for the scylla deployments, in tables it creates
// in the deployment's keyspace (docs/scylla-store.md, "Groups"):
//
//   group_rows  (group_id text, kind int, row_key blob, row blob, PRIMARY KEY (group_id, kind, row_key))
//               kind 0: meta (row_key 0x00); 1: member (row_key: user id); 2: op outcome (be64 offset)
//   user_groups (user_id text, group_id text, PRIMARY KEY (user_id, group_id))   the users' current groups
//
// Every row of a group is in one partition, so load() is one partition read (paged by kLoadPage rows: a
// 10,000-member group is three pages) and apply()'s group rows are one single-partition batch, which a
// replica applies atomically and in isolation (and which Cassandra does not hold to the multi-partition
// batch size limits a 500-member op would break). The user_groups rows are other partitions; they are
// written first, and the group batch (holding the outcome row) last: a failure between leaves the
// outcome unwritten, so the op is decided again from the same, unchanged group partition, to the same
// change, and the retry writes the same index rows again and then the batch. Until then groups_of() may
// list (or miss) that one group of a user whose add (or remove) is in flight. Why not one logged batch:
// docs/adr/0035-groups-on-redis-and-cql.md.
//
// Every write is USING TIMESTAMP the op's Outbox offset (as the mailbox's offset-derived timestamps,
// scylla/write_timestamps.h): one group's ops are one Outbox partition's, applied in offset order, so a
// later op's rows and index entries replace an earlier one's even if a delayed retry lands late, and a
// replay rewrites identical cells. Reads and writes at QUORUM, no LWT: fanout is the one writer.

#include <memory>
#include <string>
#include <vector>

#include "groups/group_store.h"
#include "mailbox/scylla/cql/cql_session.h"

namespace qim {

struct CqlGroupOptions {
  std::vector<std::string> hosts = {"127.0.0.1"};  // QIM_CQL_HOSTS
  std::string keyspace = "qim";                    // QIM_CQL_KEYSPACE (shared with the mailbox tables)
  uint32_t replication_factor = 1;                 // QIM_CQL_RF, for a keyspace this store creates
  cql::Consistency consistency = cql::Consistency::kQuorum;  // every read and write
  uint32_t request_timeout_ms = 5000;
};

class CqlGroupStore final : public GroupStore {
 public:
  // Rows per page of load() and groups_of().
  static constexpr int32_t kLoadPage = 5000;

  // Connects, creates the keyspace (SimpleStrategy, options.replication_factor) and both tables if
  // missing, prepares the statements. Transport if no host answers; Config for a bad keyspace name or a
  // keyspace holding a newer groups schema.
  static Result<std::unique_ptr<CqlGroupStore>> open(const CqlGroupOptions& options);

  // One outcome read; if undecided, the index rows in parallel, then the group batch (1 read, and the
  // inserts/updates of the rows, counted). Invariant for an offset not below 2^48 (a write timestamp).
  Status apply(const GroupChange& change) override;
  // One partition read, one read counted per page.
  Result<std::optional<GroupState>> load(const GroupId& group) override;
  Result<std::optional<GroupMeta>> meta(const GroupId& group) override;
  Result<std::optional<GroupMemberRecord>> member(const GroupId& group, const UserId& user) override;
  Result<std::optional<GroupOpOutcome>> outcome(const GroupId& group, uint64_t offset) override;
  // One user_groups partition read (sorted by the table's clustering order: group id bytes).
  Result<std::vector<GroupId>> groups_of(const UserId& user) override;
  OpCounts op_counts() const override { return counters_.snapshot(); }

 private:
  CqlGroupStore(CqlGroupOptions options, cql::Session session)
      : options_(std::move(options)), session_(std::move(session)) {}
  Status prepare();
  // The `row` cell of one group row, or nullopt.
  Result<std::optional<std::string>> read_row(const GroupId& group, int32_t kind, std::string_view key,
                                              std::string_view what);
  // Every row of one partition (`statement` binds its key), kLoadPage rows a page; a read counted a page.
  Result<cql::Rows> read_partition(const cql::Prepared& statement, const std::string& key,
                                   std::string_view what);

  CqlGroupOptions options_;
  cql::Session session_;
  cql::Prepared row_write_, row_read_, rows_read_, index_write_, index_delete_, index_read_;
  OpCounters counters_;
};

}  // namespace qim
