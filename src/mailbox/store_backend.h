#pragma once
// The primitives a storage engine provides under the MailboxStore contract. The contract's checks
// (validation, chains, pages, the in-flight table) live once in ContractStore; a backend only stores.
// Backends are thread-safe and count every operation they issue in counters().

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/sharding.h"
#include "core/status.h"
#include "mailbox/dispatch.h"
#include "mailbox/message.h"
#include "mailbox/op_counters.h"
#include "mailbox/pending_write.h"

namespace qim {

struct StoredIdentity {
  DispatchIdentity identity;
  Offset canonical_offset;
};

// One claim of claim_identities: what claim_identity takes. `identity` is borrowed for the call.
struct IdentityClaim {
  const DispatchIdentity* identity = nullptr;
  Offset observed;
};

// What claim_identities answers for one claim.
struct ClaimAnswer {
  // As claim_identity returns: the stored identity, nullopt if this claim stored its own, or the error.
  Result<std::optional<StoredIdentity>> stored;
  // Set only when `stored` is nullopt and the backend has not waited for that write: the claim counts as
  // made only once pending->wait() is OK. Null when nothing is left in flight.
  std::shared_ptr<PendingWrite> pending;
};

// Where one mailbox entry is stored.
struct EntryKey {
  UserId user;
  MailboxSeq seq;
};

// A user's retention ledger: live day buckets (ascending) and the trim.
struct RetentionLedger {
  std::vector<DayBucket> live_buckets;
  MailboxSeq trim;
};

// What every backend is constructed with.
struct BackendContext {
  ShardMap shards = *ShardMap::create(1);
  std::shared_ptr<const Clock> clock;
  int64_t retention_ms = 30 * kDayMs;
  // Entries live retention + this slack. One day by default, so none expires before its bucket may be
  // swept; a smaller slack (tests of real server-side TTLs) only makes gaps appear sooner.
  int64_t entry_ttl_slack_ms = kDayMs;
  int64_t entry_ttl_ms() const { return retention_ms + entry_ttl_slack_ms; }
  // A bucket may be swept once every entry in it is past retention.
  bool bucket_expired(DayBucket b, int64_t now_ms) const {
    return (b.value + 1) * kDayMs + retention_ms <= now_ms;
  }
};

class StoreBackend {
 public:
  virtual ~StoreBackend() = default;

  virtual std::string_view name() const = 0;
  // How many records this backend finishes with one frontier write (ADR-0022 section 4).
  virtual uint32_t declared_page_limit() const = 0;

  // First writer wins on (shard, epoch, id): returns the stored identity if there is one (writing
  // nothing), else stores `identity` with canonical = observed and returns nullopt.
  virtual Result<std::optional<StoredIdentity>> claim_identity(ShardId shard, Epoch epoch,
                                                               const DispatchIdentity& identity,
                                                               Offset observed) = 0;
  // claim_identity for each claim (their ids are distinct), one answer per claim in order. A backend whose
  // engine answers over the network issues them together (the reads, then the writes of the ones not
  // found) instead of one after the other, and may return before those writes finish: such a claim's
  // answer carries the write as `pending`, so the caller overlaps it with the entry writes and waits
  // before the frontier passes the record (ContractStore::finish_locked). This default claims one by
  // one and leaves nothing pending.
  virtual std::vector<ClaimAnswer> claim_identities(ShardId shard, Epoch epoch,
                                                    std::span<const IdentityClaim> claims) {
    std::vector<ClaimAnswer> out;
    out.reserve(claims.size());
    for (const IdentityClaim& c : claims)
      out.push_back(ClaimAnswer{claim_identity(shard, epoch, *c.identity, c.observed), nullptr});
    return out;
  }
  virtual Result<std::optional<StoredIdentity>> read_identity(ShardId shard, Epoch epoch,
                                                              const DispatchId& id) = 0;

  // Idempotent upsert of entries (TTL entry_ttl_ms), the bucket proofs of (user, day, epoch) and the
  // ledger registration of each (user, day). All entries share `epoch`.
  virtual Status write_entries(ShardId shard, Epoch epoch, std::span<const MailboxEntry> entries) = 0;

  // Removes the body of each stored entry at (user, seq) in `entries` (docs/adr/0129): afterwards the
  // engine holds no body for it, and every other field, and the entry's expiry, is as it was. An entry
  // that does not exist is not created. Idempotent. All entries are of users of one shard.
  virtual Status redact_entries(std::span<const EntryKey> entries) = 0;
  // Replaces the body of each stored entry at (user, seq) in `entries` by redact(client_msg_id, body) when
  // that answers a value (docs/adr/0157: an edit entry keeps its JSON without its text); nullopt leaves the
  // entry as it is. Every other field, and the expiry, is as it was; an entry that does not exist is not
  // created; a write made meanwhile to an entry is not lost (the replacement is a compare-and-set against
  // the value read, or, on CQL, written above that value's timestamp). Idempotent when `redact` answers
  // nullopt for its own output. `redact` is called on this thread, during the call. All entries are of
  // users of one shard.
  using EntryBodyRedaction =
      std::function<std::optional<std::string>(std::string_view client_msg_id, std::string_view body)>;
  virtual Status redact_edit_entries(std::span<const EntryKey> entries, const EntryBodyRedaction& redact) = 0;

  // The shard frontier: the highest epoch's row, or nullopt if none. CorruptEntry if the row fails its
  // check (on CQL: WRITETIME(frontier_offset) != frontier_offset).
  virtual Result<std::optional<MailboxSeq>> read_frontier(ShardId shard) = 0;
  // Every epoch's frontier row of the shard, ascending by epoch; each seq carries its epoch, and an epoch
  // the shard never finished a record at has no element. Empty if the shard has no frontier. The last
  // element equals read_frontier(). One read (on CQL a single-partition query); CorruptEntry as above.
  // Readers bound each epoch's entries by that epoch's own frontier (ADR-0022 as strengthened, see
  // docs/adr/0007-epoch-bounded-by-own-frontier.md), so a backend whose frontier value is replaced by a
  // higher epoch's (redis, scylla-lwt) keeps the previous epoch's final frontier when the epoch rises.
  virtual Result<std::vector<MailboxSeq>> read_frontiers(ShardId shard) = 0;
  // Writes the frontier of `epoch` to next.offset(). Monotonic within an epoch: a lower write never moves
  // it back. Backends that can check atomically refuse expected_previous != stored (WatermarkGap).
  virtual Status write_frontier(ShardId shard, Epoch epoch, MailboxSeq expected_previous,
                                MailboxSeq next) = 0;

  // Live (not TTL-expired) entries of a user with after < seq <= upto, ascending, at most limit.
  virtual Result<std::vector<MailboxEntry>> read_entries(const UserId& user, MailboxSeq after,
                                                         MailboxSeq upto, uint32_t limit) = 0;

  virtual Result<RetentionLedger> read_ledger(const UserId& user) = 0;

  // read_frontiers of each shard / read_ledger of each user, one answer per element in order; the first
  // failure (in order) fails the call. What MailboxStore::visibilities reads for a page of users
  // (docs/adr/0163). These defaults read one after another; a backend whose engine answers over the
  // network sends them together (on CQL one round trip per call, whatever the number).
  virtual Result<std::vector<std::vector<MailboxSeq>>> read_frontiers_of(std::span<const ShardId> shards) {
    std::vector<std::vector<MailboxSeq>> out;
    out.reserve(shards.size());
    for (ShardId shard : shards) {
      QIM_ASSIGN_OR_RETURN(auto frontiers, read_frontiers(shard));
      out.push_back(std::move(frontiers));
    }
    return out;
  }
  virtual Result<std::vector<RetentionLedger>> read_ledgers(std::span<const UserId> users) {
    std::vector<RetentionLedger> out;
    out.reserve(users.size());
    for (const UserId& user : users) {
      QIM_ASSIGN_OR_RETURN(RetentionLedger ledger, read_ledger(user));
      out.push_back(std::move(ledger));
    }
    return out;
  }
  // The max proof over epochs of (user, bucket), or nullopt if no proof row exists.
  virtual Result<std::optional<MailboxSeq>> read_bucket_proof(const UserId& user, DayBucket bucket) = 0;
  // Sets the trim and drops `expired` from the ledger, only if the ledger still equals `seen`
  // (compare-and-set); Invariant if it changed meanwhile.
  virtual Status commit_sweep(const UserId& user, const RetentionLedger& seen, MailboxSeq new_trim,
                              std::span<const DayBucket> expired) = 0;

  // The users of `shard` that have a retention ledger, in ascending byte order of their ids, strictly
  // after `after` (empty: from the first), at most `limit` (one read). A user is listed from the write
  // that first registers a bucket in its ledger (write_entries), on the same cached path, and is never
  // unlisted: a user whose ledger has emptied stays listed and its sweep finds nothing to do.
  virtual Result<std::vector<UserId>> list_ledger_users(ShardId shard, const std::string& after,
                                                        uint32_t limit) = 0;

  virtual Result<uint64_t> gc_completed_dispatches() = 0;

  virtual OpCounters& counters() = 0;
};

}  // namespace qim
