// The reads a user's visibility is made of (MailboxStore::visibility, visibilities): the shard's frontier
// rows and the user's retention ledger, one at a time or a page's worth sent together (docs/adr/0163).
#include <fmt/format.h>

#include <algorithm>

#include "mailbox/scylla/cql_cells.h"
#include "mailbox/scylla/cql_status.h"
#include "mailbox/scylla/frontier_backend.h"
#include "mailbox/scylla/write_timestamps.h"

namespace qim::scylla {

using cql::Values;

namespace {

int32_t i32(uint32_t v) {
  return static_cast<int32_t>(v);
}

// One mailbox_shard_frontier row as the frontier it stands for; CorruptEntry if it fails its check.
Result<MailboxSeq> decode_frontier_row(const cql::Row& row, ShardId shard) {
  QIM_ASSIGN_OR_RETURN(int32_t epoch, cell(row.get_i32(0), "mailbox_shard_frontier.epoch"));
  QIM_ASSIGN_OR_RETURN(int64_t offset, cell(row.get_i64(1), "mailbox_shard_frontier.frontier_offset"));
  QIM_ASSIGN_OR_RETURN(int64_t writetime, cell(row.get_i64(2), "WRITETIME(frontier_offset)"));
  // Written only USING TIMESTAMP offset: anything else (a wall-clock write) would win forever.
  if (writetime != offset) {
    return Error(Errc::kCorruptEntry,
                 fmt::format("frontier of shard {} epoch {}: WRITETIME {} != frontier_offset {} "
                             "(a write not made USING TIMESTAMP offset)",
                             shard.value, epoch, writetime, offset));
  }
  auto seq = compose(Epoch{static_cast<uint32_t>(epoch)}, Offset{static_cast<uint64_t>(offset)});
  if (epoch < 0 || offset < 0 || !seq.ok()) {
    return Error(Errc::kCorruptEntry, fmt::format("frontier of shard {}: epoch {} offset {} out of range",
                                                  shard.value, epoch, offset));
  }
  return *seq;
}

// The whole frontier partition of `shard` (one row per epoch, highest first) as read_frontiers answers.
Result<std::vector<MailboxSeq>> frontiers_from_rows(const cql::Rows& rows, ShardId shard) {
  std::vector<MailboxSeq> out;
  for (const cql::Row row : rows) {
    QIM_ASSIGN_OR_RETURN(MailboxSeq frontier, decode_frontier_row(row, shard));
    out.push_back(frontier);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

// The ledger row (none: an empty ledger, trim zero).
Result<RetentionLedger> ledger_from_rows(const cql::Rows& rows) {
  RetentionLedger ledger;
  if (rows.empty()) return ledger;
  const cql::Row row = rows[0];
  if (!row.is_null(0)) {
    QIM_ASSIGN_OR_RETURN(auto buckets, cell(row.get_i64_list(0), "mailbox_retention_meta.live_buckets"));
    for (int64_t b : buckets) ledger.live_buckets.push_back(DayBucket{b});
  }
  if (!row.is_null(1)) {
    QIM_ASSIGN_OR_RETURN(int64_t trim, cell(row.get_i64(1), "mailbox_retention_meta.trim_seq"));
    ledger.trim = seq_from_bigint(trim);
  }
  return ledger;
}

// Waits for every request (none is left in flight, even after a failure), then decodes each in order:
// the first failure, in request order, fails the whole.
template <class T, class Decode>
Result<std::vector<T>> gather(std::span<const cql::PendingResult> sent, std::string_view what,
                              Decode decode) {
  const Status all = lift(cql::wait_all(sent), what);
  if (!all.ok()) return all.error();
  std::vector<T> out;
  out.reserve(sent.size());
  for (size_t i = 0; i < sent.size(); ++i) {
    QIM_ASSIGN_OR_RETURN(T one, decode(sent[i].get().value(), i));
    out.push_back(std::move(one));
  }
  return out;
}

}  // namespace

Result<std::optional<MailboxSeq>> ScyllaFrontierBackend::read_frontier(ShardId shard) {
  counters_.reads++;
  QIM_ASSIGN_OR_RETURN(cql::Rows rows, lift(session_.execute(frontier_read_, Values().int32(i32(shard.value)),
                                                             plain_options()),
                                            "read shard frontier"));
  if (rows.empty()) return std::optional<MailboxSeq>();
  QIM_ASSIGN_OR_RETURN(MailboxSeq frontier, decode_frontier_row(rows[0], shard));
  return std::optional(frontier);
}

// The whole partition: one row per epoch the shard was ever finished at (a handful), highest first.
Result<std::vector<MailboxSeq>> ScyllaFrontierBackend::read_frontiers(ShardId shard) {
  const ShardId one[] = {shard};
  QIM_ASSIGN_OR_RETURN(auto all, ScyllaFrontierBackend::read_frontiers_of(one));
  return std::move(all[0]);
}

Result<std::vector<std::vector<MailboxSeq>>> ScyllaFrontierBackend::read_frontiers_of(
    std::span<const ShardId> shards) {
  std::vector<cql::PendingResult> sent;
  sent.reserve(shards.size());
  for (ShardId shard : shards) {
    counters_.reads++;
    sent.push_back(session_.execute_async(frontier_list_, Values().int32(i32(shard.value)), plain_options()));
  }
  return gather<std::vector<MailboxSeq>>(sent, "read shard frontiers", [&](const cql::Rows& rows, size_t i) {
    return frontiers_from_rows(rows, shards[i]);
  });
}

Result<RetentionLedger> ScyllaFrontierBackend::read_ledger(const UserId& user) {
  QIM_ASSIGN_OR_RETURN(auto all, read_ledgers(std::span(&user, 1)));
  return std::move(all[0]);
}

Result<std::vector<RetentionLedger>> ScyllaFrontierBackend::read_ledgers(std::span<const UserId> users) {
  std::vector<cql::PendingResult> sent;
  sent.reserve(users.size());
  for (const UserId& user : users) {
    counters_.reads++;
    sent.push_back(session_.execute_async(ledger_read_, Values().text(user.str()), plain_options()));
  }
  return gather<RetentionLedger>(sent, "read retention ledger",
                                 [](const cql::Rows& rows, size_t) { return ledger_from_rows(rows); });
}

}  // namespace qim::scylla
