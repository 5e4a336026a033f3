#pragma once
// "scylla-lwt": the pre-ADR-0022 "form A", kept only as the benchmark's baseline. Per finished record it
// writes 64 lane source rows and 64 lane watermarks, each by LWT; identity and bucket proofs by LWT too.
// Entries and the ledger are the same as the scylla backend's. Page limit 1.

#include <memory>

#include "mailbox/scylla/frontier_backend.h"

namespace qim::scylla {

class ScyllaLwtFormBackend final : public ScyllaFrontierBackend {
 public:
  using ScyllaFrontierBackend::ScyllaFrontierBackend;

  Status prepare() override;
  std::string_view name() const override { return "scylla-lwt"; }
  uint32_t declared_page_limit() const override { return 1; }
  Result<std::optional<StoredIdentity>> claim_identity(ShardId shard, Epoch epoch,
                                                       const DispatchIdentity& identity,
                                                       Offset observed) override;
  // The page's LWT claims concurrently (one Paxos round each, as the form has it).
  std::vector<ClaimAnswer> claim_identities(ShardId shard, Epoch epoch,
                                            std::span<const IdentityClaim> claims) override;
  Result<std::optional<MailboxSeq>> read_frontier(ShardId shard) override;
  Result<std::vector<MailboxSeq>> read_frontiers(ShardId shard) override;
  // This form's read_frontiers one shard after another (the baseline: its lanes are read apart).
  Result<std::vector<std::vector<MailboxSeq>>> read_frontiers_of(std::span<const ShardId> shards) override {
    return StoreBackend::read_frontiers_of(shards);
  }
  Status write_frontier(ShardId shard, Epoch epoch, MailboxSeq expected_previous, MailboxSeq next) override;
  Result<std::optional<MailboxSeq>> read_bucket_proof(const UserId& user, DayBucket bucket) override;

 protected:
  const char* identity_table() const override { return "lwt_dispatch"; }
  Status write_proofs(Epoch epoch, const ProofMap& proofs, cql::BatchWriter& writes) override;

 private:
  cql::Prepared identity_claim_, lanes_read_, lane_init_, lane_advance_, lane_source_, proof_raise_,
      proof_init_, proof_read_;
};

}  // namespace qim::scylla
