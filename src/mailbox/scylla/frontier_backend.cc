// The "scylla" backend: ADR-0022 as CQL statements. The rules the tables keep are in schema.h.
#include "mailbox/scylla/frontier_backend.h"

#include <fmt/format.h>

#include <algorithm>

#include "mailbox/dispatch.h"
#include "mailbox/scylla/cql_cells.h"
#include "mailbox/scylla/cql_status.h"
#include "mailbox/scylla/message_values.h"
#include "mailbox/scylla/write_timestamps.h"

namespace qim::scylla {

using cql::Values;

namespace {

// Proofs outlive the entries they bound by 30 days, so a sweep that runs late still finds them.
constexpr int64_t kProofTtlSlackSeconds = 30 * 86'400;

int32_t i32(uint32_t v) {
  return static_cast<int32_t>(v);
}
int64_t i64(uint64_t v) {
  return static_cast<int64_t>(v);
}

}  // namespace

ScyllaFrontierBackend::ScyllaFrontierBackend(BackendContext context, ScyllaConfig config,
                                             cql::Session session)
    : context_(std::move(context)), config_(std::move(config)), session_(std::move(session)) {}

Status ScyllaFrontierBackend::prepare_into(cql::Prepared& into, const std::string& text) {
  const std::string cql = fmt::format(fmt::runtime(text), fmt::arg("ks", config_.keyspace));
  QIM_ASSIGN_OR_RETURN(into, lift(session_.prepare(cql), "prepare " + cql.substr(0, 72)));
  return {};
}

Status ScyllaFrontierBackend::done(const cql::Result<cql::Rows>& result, std::string_view what) {
  if (!result.ok()) return to_error(result.error(), what);
  return {};
}

cql::ExecOptions ScyllaFrontierBackend::plain_options() const {
  return cql::ExecOptions{.consistency = config_.consistency, .idempotent = true};
}

cql::BatchLimits ScyllaFrontierBackend::batch_limits() const {
  return cql::BatchLimits{.max_statements = config_.batch_rows};
}

cql::ExecOptions ScyllaFrontierBackend::lwt_options() const {
  return cql::ExecOptions{.consistency = config_.consistency,
                          .serial_consistency = cql::Consistency::kSerial};
}

int32_t ScyllaFrontierBackend::entry_ttl_seconds() const {
  return static_cast<int32_t>((context_.entry_ttl_ms() + 999) / 1000);
}

Status ScyllaFrontierBackend::prepare() {
  QIM_RETURN_IF_ERROR(prepare_into(frontier_read_,
                                   "SELECT epoch, frontier_offset, WRITETIME(frontier_offset) "
                                   "FROM {ks}.mailbox_shard_frontier WHERE shard = ? LIMIT 1"));
  QIM_RETURN_IF_ERROR(prepare_into(frontier_list_,
                                   "SELECT epoch, frontier_offset, WRITETIME(frontier_offset) "
                                   "FROM {ks}.mailbox_shard_frontier WHERE shard = ?"));
  QIM_RETURN_IF_ERROR(
      prepare_into(frontier_write_,
                   "UPDATE {ks}.mailbox_shard_frontier USING TIMESTAMP ? SET frontier_offset = ? "
                   "WHERE shard = ? AND epoch = ?"));
  QIM_RETURN_IF_ERROR(prepare_into(identity_read_, "SELECT digest, manifest, canonical_offset FROM {ks}." +
                                                       std::string(identity_table()) +
                                                       " WHERE shard = ? AND epoch = ? AND dispatch_id = ?"));
  QIM_RETURN_IF_ERROR(
      prepare_into(identity_read_many_, "SELECT dispatch_id, digest, manifest, canonical_offset FROM {ks}." +
                                            std::string(identity_table()) +
                                            " WHERE shard = ? AND epoch = ? AND dispatch_id IN ?"));
  QIM_RETURN_IF_ERROR(
      prepare_into(identity_write_,
                   "INSERT INTO {ks}.mailbox_dispatch (shard, epoch, dispatch_id, digest, manifest, "
                   "canonical_offset) VALUES (?, ?, ?, ?, ?, ?) USING TIMESTAMP ? AND TTL ?"));
  QIM_RETURN_IF_ERROR(
      prepare_into(entry_write_,
                   "INSERT INTO {ks}.mailbox_entry (user_id, epoch, log_offset, message_id, "
                   "conversation, sender, sender_device, client_msg_id, server_time_ms, body, reply_to) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) USING TTL ?"));
  QIM_RETURN_IF_ERROR(
      prepare_into(entry_read_,
                   "SELECT epoch, log_offset, message_id, conversation, sender, sender_device, "
                   "client_msg_id, server_time_ms, body, reply_to FROM {ks}.mailbox_entry WHERE user_id = ? "
                   "AND (epoch, log_offset) > (?, ?) AND (epoch, log_offset) <= (?, ?) LIMIT ?"));
  // A recalled SEND's entry: its write times read, then its body cell deleted one microsecond above them
  // (docs/adr/0164; frontier_redact.cc): the tombstone shadows the body whatever clock stamped it, and
  // deleting a cell of a row that does not exist creates no row.
  QIM_RETURN_IF_ERROR(prepare_into(entry_writetime_read_,
                                   "SELECT WRITETIME(message_id), WRITETIME(body) FROM {ks}.mailbox_entry "
                                   "WHERE user_id = ? AND epoch = ? AND log_offset = ?"));
  QIM_RETURN_IF_ERROR(prepare_into(entry_redact_,
                                   "DELETE body FROM {ks}.mailbox_entry USING TIMESTAMP ? WHERE user_id = ? "
                                   "AND epoch = ? AND log_offset = ?"));
  // An edit entry read with its remaining TTL and its write time, then written back whole without its
  // text, for that TTL, one microsecond above that time (frontier_redact.cc).
  QIM_RETURN_IF_ERROR(prepare_into(
      entry_body_read_,
      "SELECT epoch, log_offset, message_id, conversation, sender, sender_device, "
      "client_msg_id, server_time_ms, body, reply_to, TTL(message_id), WRITETIME(message_id), "
      "WRITETIME(body) FROM {ks}.mailbox_entry WHERE user_id = ? AND epoch = ? AND log_offset = ?"));
  QIM_RETURN_IF_ERROR(
      prepare_into(entry_body_write_,
                   "INSERT INTO {ks}.mailbox_entry (user_id, epoch, log_offset, message_id, "
                   "conversation, sender, sender_device, client_msg_id, server_time_ms, body, reply_to) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) USING TTL ? AND TIMESTAMP ?"));
  QIM_RETURN_IF_ERROR(
      prepare_into(proof_write_,
                   "UPDATE {ks}.mailbox_retention_bucket_v2 USING TIMESTAMP ? AND TTL ? "
                   "SET bucket_max_seq = ? WHERE user_id = ? AND day_bucket = ? AND epoch = ?"));
  QIM_RETURN_IF_ERROR(prepare_into(proof_read_,
                                   "SELECT epoch, bucket_max_seq FROM {ks}.mailbox_retention_bucket_v2 "
                                   "WHERE user_id = ? AND day_bucket = ?"));
  QIM_RETURN_IF_ERROR(prepare_into(
      ledger_read_, "SELECT live_buckets, trim_seq FROM {ks}.mailbox_retention_meta WHERE user_id = ?"));
  QIM_RETURN_IF_ERROR(prepare_into(ledger_add_,
                                   "UPDATE {ks}.mailbox_retention_meta SET live_buckets = live_buckets + ? "
                                   "WHERE user_id = ? IF EXISTS"));
  QIM_RETURN_IF_ERROR(
      prepare_into(ledger_create_,
                   "INSERT INTO {ks}.mailbox_retention_meta (user_id, live_buckets, trim_seq) "
                   "VALUES (?, ?, ?) IF NOT EXISTS"));
  QIM_RETURN_IF_ERROR(prepare_into(ledger_user_write_,
                                   "INSERT INTO {ks}.mailbox_retention_user (shard, user_id) VALUES (?, ?)"));
  QIM_RETURN_IF_ERROR(prepare_into(ledger_users_read_,
                                   "SELECT user_id FROM {ks}.mailbox_retention_user WHERE shard = ? "
                                   "AND user_id > ? LIMIT ?"));
  return prepare_into(ledger_sweep_,
                      "UPDATE {ks}.mailbox_retention_meta SET trim_seq = ?, live_buckets = live_buckets - ? "
                      "WHERE user_id = ? IF trim_seq = ? AND live_buckets = ?");
}

// Under a single owner "read first, write only if missing" is first writer wins; in split brain the
// 2^48-1-offset timestamp still converges every replica on the earliest observation.
Result<std::optional<StoredIdentity>> ScyllaFrontierBackend::claim_identity(ShardId shard, Epoch epoch,
                                                                            const DispatchIdentity& identity,
                                                                            Offset observed) {
  const IdentityClaim one{&identity, observed};
  ClaimAnswer answer = std::move(claim_identities(shard, epoch, std::span(&one, 1)).front());
  if (answer.stored.ok() && answer.pending) {
    if (Status w = answer.pending->wait(); !w.ok()) return w.error();
  }
  return std::move(answer.stored);
}

namespace {

// An identity write left in flight by claim_identities. shared_future::get is safe from many threads
// only through their own copies, hence the copy in wait().
class CqlPendingWrite final : public PendingWrite {
 public:
  explicit CqlPendingWrite(cql::PendingResult pending) : pending_(std::move(pending)) {}
  Status wait() override {
    const cql::PendingResult mine = pending_;
    const cql::Result<cql::Rows>& result = mine.get();
    if (!result.ok()) return to_error(result.error(), "write dispatch identity");
    return {};
  }

 private:
  const cql::PendingResult pending_;
};

}  // namespace

// The same rule for a page: every read first (together), then the writes of the ids not found (together),
// returned in flight so that they overlap the page's entry writes. The ids are distinct, so no write of
// the page can change what another claim read.
std::vector<ClaimAnswer> ScyllaFrontierBackend::claim_identities(ShardId shard, Epoch epoch,
                                                                 std::span<const IdentityClaim> claims) {
  const size_t per_read = std::max<size_t>(config_.batch_rows, 1);
  auto group_of = [&](size_t r) {
    return claims.subspan(r * per_read, std::min(per_read, claims.size() - r * per_read));
  };
  std::vector<cql::PendingResult> reads;
  for (size_t r = 0; r * per_read < claims.size(); ++r)
    reads.push_back(start_identity_reads(shard, epoch, group_of(r)));
  std::vector<ClaimAnswer> out;
  out.reserve(claims.size());
  cql::BatchWriter writes(session_, plain_options(), batch_limits());
  std::vector<size_t> write_of(claims.size(), SIZE_MAX);  // the request carrying each claim's write
  for (size_t r = 0; r < reads.size(); ++r) {
    const auto group = group_of(r);
    const cql::Result<cql::Rows>& rows = reads[r].get();
    auto row_of =
        rows.ok()
            ? rows_of_claims(*rows, group)
            : Result<std::vector<std::optional<size_t>>>(to_error(rows.error(), "read dispatch identity"));
    for (size_t k = 0; k < group.size(); ++k) {
      const IdentityClaim& claim = group[k];
      if (!row_of.ok()) {
        out.push_back(ClaimAnswer{row_of.error(), nullptr});
        continue;
      }
      const std::optional<size_t> row = (*row_of)[k];
      out.push_back(ClaimAnswer{row ? identity_from_row(*rows, *row, claim.identity->id, identity_table())
                                    : Result<std::optional<StoredIdentity>>(std::optional<StoredIdentity>()),
                                nullptr});
      if (!out.back().stored.ok() || out.back().stored->has_value()) continue;
      auto values = identity_write_values(shard, epoch, claim);
      if (!values.ok()) {
        out.back().stored = values.error();
        continue;
      }
      counters_.inserts++;
      write_of[out.size() - 1] = writes.add(identity_write_, std::move(*values));
    }
  }
  std::vector<cql::PendingResult> sent = writes.finish();
  for (size_t i = 0; i < out.size(); ++i) {
    if (write_of[i] != SIZE_MAX) out[i].pending = std::make_shared<CqlPendingWrite>(sent[write_of[i]]);
  }
  return out;
}

cql::PendingResult ScyllaFrontierBackend::start_identity_read(ShardId shard, Epoch epoch,
                                                              const DispatchId& id) {
  counters_.reads++;
  return session_.execute_async(identity_read_,
                                Values().int32(i32(shard.value)).int32(i32(epoch.value)).text(id.str()),
                                plain_options());
}

// Counted as one read a claim, as the store's counters have always counted them (the engine's counters
// count the partitions read, so the two still agree).
cql::PendingResult ScyllaFrontierBackend::start_identity_reads(ShardId shard, Epoch epoch,
                                                               std::span<const IdentityClaim> claims) {
  std::vector<std::string> ids;
  ids.reserve(claims.size());
  for (const IdentityClaim& c : claims) ids.push_back(c.identity->id.str());
  counters_.reads += claims.size();
  return session_.execute_async(identity_read_many_,
                                Values().int32(i32(shard.value)).int32(i32(epoch.value)).text_list(ids),
                                plain_options());
}

Result<std::vector<std::optional<size_t>>> ScyllaFrontierBackend::rows_of_claims(
    const cql::Rows& rows, std::span<const IdentityClaim> claims) const {
  const auto id_col = rows.column_index("dispatch_id");
  if (!id_col) return Error(Errc::kCorruptEntry, std::string(identity_table()) + " read lacks dispatch_id");
  std::map<std::string_view, size_t> index;  // id -> row; views into `rows`
  for (size_t i = 0; i < rows.size(); ++i) {
    auto id = rows[i].get_text(*id_col);
    if (id.ok()) index.emplace(*id, i);
  }
  std::vector<std::optional<size_t>> out;
  out.reserve(claims.size());
  for (const IdentityClaim& c : claims) {
    auto found = index.find(c.identity->id.str());
    out.push_back(found == index.end() ? std::nullopt : std::optional<size_t>(found->second));
  }
  return out;
}

Result<Values> ScyllaFrontierBackend::identity_write_values(ShardId shard, Epoch epoch,
                                                            const IdentityClaim& claim) {
  QIM_ASSIGN_OR_RETURN(int64_t ts, first_writer_timestamp(claim.observed));
  const DispatchIdentity& identity = *claim.identity;
  return Values()
      .int32(i32(shard.value))
      .int32(i32(epoch.value))
      .text(identity.id.str())
      .bigint(i64(identity.digest))
      .blob(encode_manifest(identity.manifest))
      .bigint(i64(claim.observed.value))
      .bigint(ts)
      .int32(static_cast<int32_t>(kDispatchIdentityTtlSeconds));
}

Result<std::optional<StoredIdentity>> ScyllaFrontierBackend::read_identity(ShardId shard, Epoch epoch,
                                                                           const DispatchId& id) {
  const cql::PendingResult read = start_identity_read(shard, epoch, id);
  const cql::Result<cql::Rows>& rows = read.get();
  if (!rows.ok()) return to_error(rows.error(), "read dispatch identity");
  return identity_from_rows(rows.value(), id, identity_table());
}

Result<std::optional<StoredIdentity>> ScyllaFrontierBackend::identity_from_rows(const cql::Rows& rows,
                                                                                const DispatchId& id,
                                                                                const std::string& table) {
  if (rows.empty()) return std::optional<StoredIdentity>();
  return identity_from_row(rows, 0, id, table);
}

Result<std::optional<StoredIdentity>> ScyllaFrontierBackend::identity_from_row(const cql::Rows& rows,
                                                                               size_t index,
                                                                               const DispatchId& id,
                                                                               const std::string& table) {
  const auto digest_col = rows.column_index("digest"), manifest_col = rows.column_index("manifest"),
             canonical_col = rows.column_index("canonical_offset");
  if (!digest_col || !manifest_col || !canonical_col) {
    return Error(Errc::kCorruptEntry, table + " row of " + id.str() + " lacks a column");
  }
  const cql::Row row = rows[index];
  StoredIdentity out;
  out.identity.id = id;
  QIM_ASSIGN_OR_RETURN(int64_t digest, cell(row.get_i64(*digest_col), "dispatch digest"));
  QIM_ASSIGN_OR_RETURN(auto manifest, cell(row.get_blob(*manifest_col), "dispatch manifest"));
  QIM_ASSIGN_OR_RETURN(int64_t canonical, cell(row.get_i64(*canonical_col), "dispatch canonical_offset"));
  out.identity.digest = static_cast<uint64_t>(digest);
  QIM_ASSIGN_OR_RETURN(
      out.identity.manifest,
      decode_manifest(std::string_view(reinterpret_cast<const char*>(manifest.data()), manifest.size())));
  if (canonical < 0 || static_cast<uint64_t>(canonical) > kMaxOffset) {
    return Error(Errc::kCorruptEntry,
                 fmt::format("{}.canonical_offset {} of {} is out of range", table, canonical, id.str()));
  }
  out.canonical_offset = Offset{static_cast<uint64_t>(canonical)};
  return std::optional(std::move(out));
}

// Entries and proofs are written concurrently; both finish before the frontier may advance, and after a
// crash the frontier has not moved, so the whole record is replayed: write order does not matter.
Status ScyllaFrontierBackend::write_entries(ShardId, Epoch epoch, std::span<const MailboxEntry> entries) {
  const int64_t now = context_.clock->now_ms();
  const int32_t ttl = entry_ttl_seconds();
  cql::BatchWriter writes(session_, plain_options(), batch_limits());
  ProofMap proofs;
  for (const auto& e : entries) {
    const Message& m = e.message;
    counters_.inserts++;
    Values values;
    values.text(e.user.str()).int32(i32(e.seq.epoch().value)).bigint(i64(e.seq.offset().value));
    bind_message_columns(values, m).int32(ttl);
    writes.add(entry_write_, std::move(values));
    auto& proof = proofs[{e.user.str(), day_bucket_of(m.server_time_ms).value}];
    proof = std::max(proof, e.seq);
  }
  Status proofs_started = write_proofs(epoch, proofs, writes);
  Status written = lift(cql::wait_all(writes.finish()), "write mailbox entries and bucket proofs");
  QIM_RETURN_IF_ERROR(proofs_started);
  QIM_RETURN_IF_ERROR(written);
  return register_buckets(proofs, now);
}

Status ScyllaFrontierBackend::write_proofs(Epoch epoch, const ProofMap& proofs, cql::BatchWriter& writes) {
  const int32_t ttl = entry_ttl_seconds() + static_cast<int32_t>(kProofTtlSlackSeconds);
  for (const auto& [key, seq] : proofs) {
    QIM_ASSIGN_OR_RETURN(int64_t ts, monotonic_max_timestamp(seq.offset(), "bucket_max_seq"));
    counters_.updates++;
    writes.add(proof_write_, Values()
                                 .bigint(ts)
                                 .int32(ttl)
                                 .bigint(seq_to_bigint(seq))
                                 .text(key.first)
                                 .bigint(key.second)
                                 .int32(i32(epoch.value)));
  }
  return {};
}

Status ScyllaFrontierBackend::write_frontier(ShardId shard, Epoch epoch, MailboxSeq, MailboxSeq next) {
  QIM_ASSIGN_OR_RETURN(int64_t ts, monotonic_max_timestamp(next.offset(), "frontier_offset"));
  counters_.updates++;
  return done(session_.execute(frontier_write_,
                               Values()
                                   .bigint(ts)
                                   .bigint(i64(next.offset().value))
                                   .int32(i32(shard.value))
                                   .int32(i32(epoch.value)),
                               plain_options()),
              "write shard frontier");
}

Result<std::vector<MailboxEntry>> ScyllaFrontierBackend::read_entries(const UserId& user, MailboxSeq after,
                                                                      MailboxSeq upto, uint32_t limit) {
  counters_.reads++;
  QIM_ASSIGN_OR_RETURN(cql::Rows rows, lift(session_.execute(entry_read_,
                                                             Values()
                                                                 .text(user.str())
                                                                 .int32(i32(after.epoch().value))
                                                                 .bigint(i64(after.offset().value))
                                                                 .int32(i32(upto.epoch().value))
                                                                 .bigint(i64(upto.offset().value))
                                                                 .int32(static_cast<int32_t>(limit)),
                                                             plain_options()),
                                            "read mailbox entries"));
  std::vector<MailboxEntry> out;
  out.reserve(rows.size());
  for (const cql::Row row : rows) {
    QIM_ASSIGN_OR_RETURN(MailboxEntry e, decode_entry(user, row));
    out.push_back(std::move(e));
  }
  return out;
}

Result<MailboxEntry> ScyllaFrontierBackend::decode_entry(const UserId& user, const cql::Row& row) const {
  QIM_ASSIGN_OR_RETURN(int32_t epoch, cell(row.get_i32(0), "mailbox_entry.epoch"));
  QIM_ASSIGN_OR_RETURN(int64_t offset, cell(row.get_i64(1), "mailbox_entry.log_offset"));
  auto seq = compose(Epoch{static_cast<uint32_t>(epoch)}, Offset{static_cast<uint64_t>(offset)});
  if (epoch < 0 || offset < 0 || !seq.ok()) {
    return Error(Errc::kCorruptEntry, fmt::format("mailbox_entry of {}: epoch {} offset {} out of range",
                                                  user.str(), epoch, offset));
  }
  MailboxEntry e{user, *seq, {}};
  Message& m = e.message;
  QIM_ASSIGN_OR_RETURN(int64_t id, cell(row.get_i64(2), "mailbox_entry.message_id"));
  m.id = MessageId{static_cast<uint64_t>(id)};
  QIM_ASSIGN_OR_RETURN(m.conversation, name_cell<ConversationId>(row, 3, "mailbox_entry.conversation"));
  QIM_ASSIGN_OR_RETURN(m.sender, name_cell<UserId>(row, 4, "mailbox_entry.sender"));
  QIM_ASSIGN_OR_RETURN(m.sender_device, name_cell<DeviceId>(row, 5, "mailbox_entry.sender_device", true));
  if (!row.is_null(6)) {
    QIM_ASSIGN_OR_RETURN(auto client_id, cell(row.get_text(6), "mailbox_entry.client_msg_id"));
    m.client_msg_id = std::string(client_id);
  }
  QIM_ASSIGN_OR_RETURN(m.server_time_ms, cell(row.get_i64(7), "mailbox_entry.server_time_ms"));
  if (!row.is_null(8)) {
    QIM_ASSIGN_OR_RETURN(auto body, cell(row.get_blob(8), "mailbox_entry.body"));
    m.body.assign(reinterpret_cast<const char*>(body.data()), body.size());
  }
  if (!row.is_null(9)) {
    QIM_ASSIGN_OR_RETURN(int64_t reply_to, cell(row.get_i64(9), "mailbox_entry.reply_to"));
    m.reply_to = MessageId{static_cast<uint64_t>(reply_to)};
  }
  return e;
}

Result<std::optional<MailboxSeq>> ScyllaFrontierBackend::read_bucket_proof(const UserId& user,
                                                                           DayBucket bucket) {
  counters_.reads++;
  QIM_ASSIGN_OR_RETURN(
      cql::Rows rows,
      lift(session_.execute(proof_read_, Values().text(user.str()).bigint(bucket.value), plain_options()),
           "read bucket proof"));
  std::optional<MailboxSeq> best;
  for (const cql::Row row : rows) {  // one row per epoch: the max over epochs is unaffected by split brain
    if (row.is_null(1)) continue;
    QIM_ASSIGN_OR_RETURN(int64_t v, cell(row.get_i64(1), "mailbox_retention_bucket_v2.bucket_max_seq"));
    best = std::max(best.value_or(MailboxSeq{}), seq_from_bigint(v));
  }
  return best;
}

Status ScyllaFrontierBackend::commit_sweep(const UserId& user, const RetentionLedger& seen,
                                           MailboxSeq new_trim, std::span<const DayBucket> expired) {
  counters_.lwts++;
  std::vector<int64_t> gone, live;
  for (DayBucket b : expired) gone.push_back(b.value);
  for (DayBucket b : seen.live_buckets) live.push_back(b.value);
  QIM_ASSIGN_OR_RETURN(cql::Rows rows, lift(session_.execute(ledger_sweep_,
                                                             Values()
                                                                 .bigint(seq_to_bigint(new_trim))
                                                                 .bigint_list(gone)
                                                                 .text(user.str())
                                                                 .bigint(seq_to_bigint(seen.trim))
                                                                 .bigint_list(live),
                                                             lwt_options()),
                                            "sweep retention ledger"));
  if (rows.applied() != true) {
    return Error(Errc::kInvariant, "retention ledger of " + user.str() + " changed during the sweep");
  }
  return {};
}

// Ledger registration: an LWT, at most once per user and day in this process. A bucket that is already
// expired takes the expiry branch before the cache is consulted: it is not registered (its entries are
// past retention, and the sweep may already have passed it).
Status ScyllaFrontierBackend::register_buckets(const ProofMap& proofs, int64_t now) {
  cache_.forget_before(DayBucket{(now - context_.retention_ms) / kDayMs});
  for (const auto& [key, seq] : proofs) {
    const DayBucket bucket{key.second};
    if (context_.bucket_expired(bucket, now)) continue;
    const UserId user = UserId::unchecked(key.first);
    if (cache_.contains(user, bucket)) continue;
    QIM_RETURN_IF_ERROR(register_bucket(user, bucket));
    cache_.insert(user, bucket);
  }
  return {};
}

Status ScyllaFrontierBackend::register_bucket(const UserId& user, DayBucket bucket) {
  const std::vector<int64_t> one = {bucket.value};
  for (int attempt = 0; attempt < 3; ++attempt) {
    counters_.lwts++;
    QIM_ASSIGN_OR_RETURN(
        cql::Rows added,
        lift(session_.execute(ledger_add_, Values().bigint_list(one).text(user.str()), lwt_options()),
             "register retention bucket"));
    if (added.applied() == true) return list_ledger_user(user);
    counters_.lwts++;
    QIM_ASSIGN_OR_RETURN(
        cql::Rows created,
        lift(session_.execute(ledger_create_, Values().text(user.str()).bigint_list(one).bigint(0),
                              lwt_options()),
             "create retention ledger"));
    if (created.applied() == true) return list_ledger_user(user);
  }
  return Error(Errc::kTransport, fmt::format("could not register retention bucket {} of {} after 3 attempts",
                                             bucket.value, user.str()));
}

// After the ledger registration, on the same once-per-(user, day) path: a plain idempotent insert. A
// failure fails write_entries, so the record is replayed and the user listed before anything is visible.
Status ScyllaFrontierBackend::list_ledger_user(const UserId& user) {
  counters_.inserts++;
  return done(session_.execute(ledger_user_write_,
                               Values().int32(i32(context_.shards.shard_of(user).value)).text(user.str()),
                               plain_options()),
              "list retention user");
}

Result<std::vector<UserId>> ScyllaFrontierBackend::list_ledger_users(ShardId shard, const std::string& after,
                                                                     uint32_t limit) {
  counters_.reads++;
  QIM_ASSIGN_OR_RETURN(
      cql::Rows rows,
      lift(session_.execute(ledger_users_read_,
                            Values().int32(i32(shard.value)).text(after).int32(static_cast<int32_t>(limit)),
                            plain_options()),
           "list retention users"));
  std::vector<UserId> out;
  out.reserve(rows.size());
  for (const cql::Row row : rows) {
    QIM_ASSIGN_OR_RETURN(auto user, cell(row.get_text(0), "mailbox_retention_user.user_id"));
    out.push_back(UserId::unchecked(std::string(user)));
  }
  return out;
}

}  // namespace qim::scylla
