#include "mailbox/scylla/lwt_form_backend.h"

#include <fmt/format.h>

#include "mailbox/scylla/cql_cells.h"
#include "mailbox/scylla/cql_status.h"
#include "mailbox/scylla/write_timestamps.h"

namespace qim::scylla {

namespace {
using cql::Values;
int32_t i32(uint32_t v) {
  return static_cast<int32_t>(v);
}
}  // namespace

Status ScyllaLwtFormBackend::prepare() {
  QIM_RETURN_IF_ERROR(ScyllaFrontierBackend::prepare());
  QIM_RETURN_IF_ERROR(
      prepare_into(identity_claim_,
                   "INSERT INTO {ks}.lwt_dispatch (shard, epoch, dispatch_id, digest, manifest, "
                   "canonical_offset) VALUES (?, ?, ?, ?, ?, ?) IF NOT EXISTS USING TTL ?"));
  QIM_RETURN_IF_ERROR(prepare_into(
      lanes_read_, "SELECT lane, epoch, w FROM {ks}.lane_watermark WHERE shard = ? AND lane IN ?"));
  QIM_RETURN_IF_ERROR(
      prepare_into(lane_init_,
                   "INSERT INTO {ks}.lane_watermark (shard, lane, epoch, w) VALUES (?, ?, ?, ?) "
                   "IF NOT EXISTS"));
  QIM_RETURN_IF_ERROR(
      prepare_into(lane_advance_,
                   "UPDATE {ks}.lane_watermark SET epoch = ?, w = ? WHERE shard = ? AND lane = ? "
                   "IF w = ?"));
  QIM_RETURN_IF_ERROR(
      prepare_into(lane_source_,
                   "INSERT INTO {ks}.lane_dispatch (shard, lane, seq, dispatch_id) VALUES (?, ?, ?, ?) "
                   "IF NOT EXISTS"));
  QIM_RETURN_IF_ERROR(prepare_into(proof_raise_,
                                   "UPDATE {ks}.lwt_retention_bucket SET bucket_max_seq = ? "
                                   "WHERE user_id = ? AND day_bucket = ? IF bucket_max_seq < ?"));
  QIM_RETURN_IF_ERROR(
      prepare_into(proof_init_,
                   "INSERT INTO {ks}.lwt_retention_bucket (user_id, day_bucket, bucket_max_seq) "
                   "VALUES (?, ?, ?) IF NOT EXISTS"));
  return prepare_into(
      proof_read_,
      "SELECT bucket_max_seq FROM {ks}.lwt_retention_bucket WHERE user_id = ? AND day_bucket = ?");
}

// First writer wins by Paxos: one LWT per observation.
Result<std::optional<StoredIdentity>> ScyllaLwtFormBackend::claim_identity(ShardId shard, Epoch epoch,
                                                                           const DispatchIdentity& identity,
                                                                           Offset observed) {
  const IdentityClaim one{&identity, observed};
  return std::move(claim_identities(shard, epoch, std::span(&one, 1)).front().stored);
}

// Each Paxos round answers whether it applied, so nothing is left in flight.
std::vector<ClaimAnswer> ScyllaLwtFormBackend::claim_identities(ShardId shard, Epoch epoch,
                                                                std::span<const IdentityClaim> claims) {
  std::vector<cql::PendingResult> pending;
  pending.reserve(claims.size());
  for (const IdentityClaim& c : claims) {
    counters_.lwts++;
    pending.push_back(session_.execute_async(identity_claim_,
                                             Values()
                                                 .int32(i32(shard.value))
                                                 .int32(i32(epoch.value))
                                                 .text(c.identity->id.str())
                                                 .bigint(static_cast<int64_t>(c.identity->digest))
                                                 .blob(encode_manifest(c.identity->manifest))
                                                 .bigint(static_cast<int64_t>(c.observed.value))
                                                 .int32(static_cast<int32_t>(kDispatchIdentityTtlSeconds)),
                                             lwt_options()));
  }
  auto answer = [&](size_t i) -> Result<std::optional<StoredIdentity>> {
    const cql::Result<cql::Rows>& rows = pending[i].get();
    if (!rows.ok()) return to_error(rows.error(), "claim dispatch identity (LWT)");
    if (rows.value().applied() == true) return std::optional<StoredIdentity>();
    // A failed IF NOT EXISTS returns the existing row.
    return identity_from_rows(rows.value(), claims[i].identity->id, identity_table());
  };
  std::vector<ClaimAnswer> out;
  out.reserve(claims.size());
  for (size_t i = 0; i < claims.size(); ++i) out.push_back(ClaimAnswer{answer(i), nullptr});
  return out;
}

Result<std::optional<MailboxSeq>> ScyllaLwtFormBackend::read_frontier(ShardId shard) {
  counters_.reads++;
  std::vector<int64_t> lanes;
  for (uint32_t l = 0; l < kLanes; ++l) lanes.push_back(l);
  QIM_ASSIGN_OR_RETURN(cql::Rows rows,
                       lift(session_.execute(lanes_read_, Values().int32(i32(shard.value)).bigint_list(lanes),
                                             plain_options()),
                            "read lane watermarks"));
  if (rows.empty()) return std::optional<MailboxSeq>();
  // W = the lowest lane watermark: the shard is contiguous only up to its slowest lane.
  std::optional<MailboxSeq> lowest;
  for (const cql::Row row : rows) {
    QIM_ASSIGN_OR_RETURN(int64_t w, cell(row.get_i64(2), "lane_watermark.w"));
    lowest = std::min(lowest.value_or(seq_from_bigint(w)), seq_from_bigint(w));
  }
  if (rows.size() != kLanes) return std::optional(MailboxSeq{});
  return lowest;
}

// The lane rows hold only the current epoch's W; older epochs' final frontiers are the rows of
// mailbox_shard_frontier recorded when the epoch rose (below). Two reads: this form is the baseline only.
Result<std::vector<MailboxSeq>> ScyllaLwtFormBackend::read_frontiers(ShardId shard) {
  QIM_ASSIGN_OR_RETURN(std::vector<MailboxSeq> out, ScyllaFrontierBackend::read_frontiers(shard));
  QIM_ASSIGN_OR_RETURN(auto current, read_frontier(shard));
  if (current && !current->is_zero()) {
    std::erase_if(out, [&](MailboxSeq f) { return f.epoch() >= current->epoch(); });
    out.push_back(*current);
  }
  return out;
}

// Form A: a source row and a conditional W update per lane, 128 LWTs, all in flight at once.
Status ScyllaLwtFormBackend::write_frontier(ShardId shard, Epoch epoch, MailboxSeq expected_previous,
                                            MailboxSeq next) {
  if (!expected_previous.is_zero() && expected_previous.epoch() < epoch) {
    // The first advance of a new epoch replaces the old epoch's W: keep that W (read from the lanes, so
    // one the old epoch reached) as the old epoch's frontier row first. A blind max write: a retry after
    // a lost race only raises it to a W the old epoch reached too.
    QIM_RETURN_IF_ERROR(ScyllaFrontierBackend::write_frontier(shard, expected_previous.epoch(), MailboxSeq{},
                                                              expected_previous));
  }
  std::vector<cql::PendingResult> pending;
  for (uint32_t lane = 0; lane < kLanes; ++lane) {
    counters_.lwts += 2;
    pending.push_back(session_.execute_async(
        lane_source_,
        Values().int32(i32(shard.value)).int32(i32(lane)).bigint(seq_to_bigint(next)).text(next.to_string()),
        lwt_options()));
    if (expected_previous.is_zero()) {
      pending.push_back(session_.execute_async(lane_init_,
                                               Values()
                                                   .int32(i32(shard.value))
                                                   .int32(i32(lane))
                                                   .int32(i32(epoch.value))
                                                   .bigint(seq_to_bigint(next)),
                                               lwt_options()));
    } else {
      pending.push_back(session_.execute_async(lane_advance_,
                                               Values()
                                                   .int32(i32(epoch.value))
                                                   .bigint(seq_to_bigint(next))
                                                   .int32(i32(shard.value))
                                                   .int32(i32(lane))
                                                   .bigint(seq_to_bigint(expected_previous)),
                                               lwt_options()));
    }
  }
  QIM_RETURN_IF_ERROR(lift(cql::wait_all(pending), "advance lane watermarks (LWT)"));
  for (size_t i = 1; i < pending.size(); i += 2) {
    if (pending[i].get()->applied() != true) {
      return Error(Errc::kWatermarkGap, fmt::format("lane {} of shard {} is not at {}", i / 2, shard.value,
                                                    expected_previous.to_string()));
    }
  }
  return {};
}

// Monotonic max by compare-and-set, one entry's proof at a time.
Status ScyllaLwtFormBackend::write_proofs(Epoch, const ProofMap& proofs, cql::BatchWriter&) {
  for (const auto& [key, seq] : proofs) {
    counters_.lwts++;
    QIM_ASSIGN_OR_RETURN(cql::Rows raised, lift(session_.execute(proof_raise_,
                                                                 Values()
                                                                     .bigint(seq_to_bigint(seq))
                                                                     .text(key.first)
                                                                     .bigint(key.second)
                                                                     .bigint(seq_to_bigint(seq)),
                                                                 lwt_options()),
                                                "raise bucket proof (LWT)"));
    const auto current = raised.column_index("bucket_max_seq");
    const bool higher = !raised.empty() && current && !raised[0].is_null(*current);
    if (raised.applied() == true || higher) continue;  // raised, or already at least as high
    counters_.lwts++;
    QIM_RETURN_IF_ERROR(done(
        session_.execute(proof_init_, Values().text(key.first).bigint(key.second).bigint(seq_to_bigint(seq)),
                         lwt_options()),
        "create bucket proof (LWT)"));
  }
  return {};
}

Result<std::optional<MailboxSeq>> ScyllaLwtFormBackend::read_bucket_proof(const UserId& user,
                                                                          DayBucket bucket) {
  counters_.reads++;
  QIM_ASSIGN_OR_RETURN(
      cql::Rows rows,
      lift(session_.execute(proof_read_, Values().text(user.str()).bigint(bucket.value), plain_options()),
           "read bucket proof"));
  if (rows.empty() || rows[0].is_null(0)) return std::optional<MailboxSeq>();
  QIM_ASSIGN_OR_RETURN(int64_t v, cell(rows[0].get_i64(0), "lwt_retention_bucket.bucket_max_seq"));
  return std::optional(seq_from_bigint(v));
}

}  // namespace qim::scylla
