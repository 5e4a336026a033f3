#pragma once
// ScyllaFrontierBackend: the "scylla" backend of ADR-0022 (see scylla_backend.h). Internal: callers open
// it through open_scylla_backend(). The pre-ADR form derives from it and replaces the identity, proof
// and frontier statements (lwt_form_backend.h).

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mailbox/scylla/cql/batch_writer.h"
#include "mailbox/scylla/cql/cql_session.h"
#include "mailbox/scylla/ledger_cache.h"
#include "mailbox/scylla/scylla_backend.h"

namespace qim::scylla {

class ScyllaFrontierBackend : public StoreBackend {
 public:
  ScyllaFrontierBackend(BackendContext context, ScyllaConfig config, cql::Session session);

  // Prepares every statement. Transport/InvalidArgument if the cluster refuses one.
  virtual Status prepare();

  std::string_view name() const override { return "scylla"; }
  uint32_t declared_page_limit() const override { return 64; }
  Result<std::optional<StoredIdentity>> claim_identity(ShardId shard, Epoch epoch,
                                                       const DispatchIdentity& identity,
                                                       Offset observed) override;
  // The page's identity reads (one `IN` read per batch_rows ids, sent together), then the writes of those
  // not found (UNLOGGED batches of batch_rows), returned in flight (ClaimAnswer::pending): one round trip
  // waited for here, the writes' overlapping the entries'. batch_rows 1: one request per id, as before.
  std::vector<ClaimAnswer> claim_identities(ShardId shard, Epoch epoch,
                                            std::span<const IdentityClaim> claims) override;
  Result<std::optional<StoredIdentity>> read_identity(ShardId shard, Epoch epoch,
                                                      const DispatchId& id) override;
  Status write_entries(ShardId shard, Epoch epoch, std::span<const MailboxEntry> entries) override;
  // Each entry's WRITETIME(message_id) and WRITETIME(body) read (all reads in flight together), then, for
  // each that exists with a body, the body cell deleted USING TIMESTAMP <the later of the two + 1>
  // (UNLOGGED batches): the deletion wins over the body read whatever clock stamped it (the entries are
  // written without a client timestamp: the coordinator's clock, which may be ahead of the one that would
  // stamp a plain DELETE). An entry that does not exist, or has no body, gets no write. docs/adr/0164,
  // frontier_redact.cc.
  Status redact_entries(std::span<const EntryKey> entries) override;
  // Each entry read with TTL(message_id) and its cells' WRITETIME (all reads in flight together), then,
  // for each `redact` changes, the whole row written again with the new body USING TTL <the remaining
  // TTL> AND TIMESTAMP <the write time + 1> (UNLOGGED batches): it wins over the version read whatever
  // the clocks, and loses to any write made after it, as a compare-and-set would. The whole row, not the
  // body cell alone: a cell written later than the row expires later than its other cells, and a row
  // left with a body and no message_id would read as corrupt. frontier_redact.cc.
  Status redact_edit_entries(std::span<const EntryKey> entries, const EntryBodyRedaction& redact) override;
  Result<std::optional<MailboxSeq>> read_frontier(ShardId shard) override;
  Result<std::vector<MailboxSeq>> read_frontiers(ShardId shard) override;
  // One frontier_list read per shard / ledger read per user, all sent before the first is waited for (one
  // round trip); frontier_visibility.cc with the single reads.
  Result<std::vector<std::vector<MailboxSeq>>> read_frontiers_of(std::span<const ShardId> shards) override;
  Result<std::vector<RetentionLedger>> read_ledgers(std::span<const UserId> users) override;
  Status write_frontier(ShardId shard, Epoch epoch, MailboxSeq expected_previous, MailboxSeq next) override;
  Result<std::vector<MailboxEntry>> read_entries(const UserId& user, MailboxSeq after, MailboxSeq upto,
                                                 uint32_t limit) override;
  Result<RetentionLedger> read_ledger(const UserId& user) override;
  Result<std::optional<MailboxSeq>> read_bucket_proof(const UserId& user, DayBucket bucket) override;
  Status commit_sweep(const UserId& user, const RetentionLedger& seen, MailboxSeq new_trim,
                      std::span<const DayBucket> expired) override;
  Result<std::vector<UserId>> list_ledger_users(ShardId shard, const std::string& after,
                                                uint32_t limit) override;
  Result<uint64_t> gc_completed_dispatches() override { return uint64_t{0}; }  // TTL does it (ADR-0022 s3)
  OpCounters& counters() override { return counters_; }

 protected:
  using ProofMap = std::map<std::pair<std::string, int64_t>, MailboxSeq>;  // (user, day) -> max seq

  // Adds the proof writes of one write_entries call (one per user and day, the max seq) to `writes`.
  virtual Status write_proofs(Epoch epoch, const ProofMap& proofs, cql::BatchWriter& writes);
  // The table identities are read from (the forms keep them apart: LWT and timestamps never share one).
  virtual const char* identity_table() const { return "mailbox_dispatch"; }
  // The identity in the first of `rows` (columns digest, manifest, canonical_offset by name), or nullopt.
  static Result<std::optional<StoredIdentity>> identity_from_rows(const cql::Rows& rows, const DispatchId& id,
                                                                  const std::string& table);
  // The identity in row `index` of `rows`, which must exist.
  static Result<std::optional<StoredIdentity>> identity_from_row(const cql::Rows& rows, size_t index,
                                                                 const DispatchId& id,
                                                                 const std::string& table);
  // Prepares `text` with {ks} replaced by the keyspace.
  Status prepare_into(cql::Prepared& into, const std::string& text);
  // Maps the outcome of a statement to a Status naming `what`.
  static Status done(const cql::Result<cql::Rows>& result, std::string_view what);

  cql::ExecOptions plain_options() const;
  cql::BatchLimits batch_limits() const;
  cql::ExecOptions lwt_options() const;
  int32_t entry_ttl_seconds() const;

  BackendContext context_;
  ScyllaConfig config_;
  cql::Session session_;
  OpCounters counters_;

 private:
  // Starts the identity read of `id`, of all `ids` (one IN read) / the values of the first-writer write of
  // `claim`.
  cql::PendingResult start_identity_read(ShardId shard, Epoch epoch, const DispatchId& id);
  cql::PendingResult start_identity_reads(ShardId shard, Epoch epoch, std::span<const IdentityClaim> claims);
  // The row of each claim's id in the answer of its IN read (rows come in no promised order), nullopt
  // where none; CorruptEntry if the answer lacks the id column.
  Result<std::vector<std::optional<size_t>>> rows_of_claims(const cql::Rows& rows,
                                                            std::span<const IdentityClaim> claims) const;
  Result<cql::Values> identity_write_values(ShardId shard, Epoch epoch, const IdentityClaim& claim);

  Result<MailboxEntry> decode_entry(const UserId& user, const cql::Row& row) const;
  Status register_buckets(const ProofMap& proofs, int64_t now);
  Status register_bucket(const UserId& user, DayBucket bucket);
  Status list_ledger_user(const UserId& user);

  LedgerCache cache_;
  cql::Prepared frontier_read_, frontier_list_, frontier_write_, identity_read_, identity_write_,
      identity_read_many_, entry_write_, entry_read_, entry_writetime_read_, entry_redact_, entry_body_read_,
      entry_body_write_, proof_write_, proof_read_, ledger_read_, ledger_add_, ledger_create_, ledger_sweep_,
      ledger_user_write_, ledger_users_read_;
};

}  // namespace qim::scylla
