#pragma once
// The MailboxStore contract (ADR-0022, SYSTEM.md section 3). One interface, several backends:
// memory (tests), embedded (RocksDB, the default), redis (ADR-0015), scylla (ADR-0022) and scylla-lwt
// (the pre-ADR "form A", kept as the benchmark's baseline).
//
// A shard is materialised by one owner at a time, at an epoch. For each record the owner calls
//   begin_dispatch -> write_chunks (unless the entries are known written) -> finish_dispatch(_page)
// or, a page of records at a time, begin_dispatch_page -> one write_chunks -> finish_dispatch_page
// and clients see an entry only once the frontier of its own epoch covers its mailbox_seq: an entry an
// owner wrote above its last frontier before a newer epoch took the shard is never shown.
//
// Every method is thread-safe. Errors are values (see core/status.h); none is swallowed.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/mailbox_seq.h"
#include "core/sharding.h"
#include "core/status.h"
#include "mailbox/dispatch.h"
#include "mailbox/message.h"
#include "mailbox/op_counters.h"
#include "mailbox/redaction.h"

namespace qim {

enum class BeginKind { kFresh, kExisting };

struct BeginOutcome {
  BeginKind kind = BeginKind::kFresh;
  Offset canonical_offset;    // offset of the first observation; entries use compose(epoch, canonical)
  MailboxSeq seq;             // compose(epoch, canonical_offset)
  bool canonical = true;      // this observation is the canonical one (observed == canonical)
  bool needs_entries = true;  // false when the entries are known written (in flight or below frontier)
};

// One lane's move of W: from expected_previous to observed. Today all 64 must be equal (M-1 not built).
// One record of begin_dispatch_page: what begin_dispatch takes. `identity` is borrowed for the call.
struct BeginRequest {
  const DispatchIdentity* identity = nullptr;
  Offset observed;
};

struct LaneAdvance {
  Lane lane;
  MailboxSeq expected_previous;
  MailboxSeq observed;
};
using LaneAdvances = std::vector<LaneAdvance>;

// The 64 equal advances of a whole-shard move (the only kind accepted until M-1).
LaneAdvances uniform_advances(MailboxSeq expected_previous, MailboxSeq observed);

struct FinishOutcome {
  bool advanced = false;  // false: zero advance (a repeated, non-canonical observation)
  MailboxSeq frontier;    // the shard frontier after the call
};

struct PageItem {
  DispatchId dispatch_id;
  LaneAdvances advances;
};

struct PageOutcome {
  MailboxSeq frontier;
  uint32_t advanced_records = 0;
  uint32_t frontier_writes = 0;  // 1 for a page that moved the frontier, else 0
};

struct ChunkWrite {
  DispatchId dispatch_id;
  uint32_t chunk_index = 0;
  const Message* message = nullptr;    // shared by every entry of the record
  std::span<const UserId> recipients;  // must match the manifest's count for this chunk
};

struct DispatchProgress {
  Offset canonical_offset;
  uint32_t chunk_count = 0;
  std::vector<uint32_t> completed_chunks;  // in flight: from the process; else all if covered, else none
  bool in_flight = false;
};

struct MailboxQuery {
  UserId user;
  MailboxSeq after;  // cursor: the last seq the client has; zero means "from the oldest retained"
  uint32_t limit = 100;
};

struct MailboxPage {
  // seq > max(after, trim), seq <= the frontier of seq's own epoch, ascending
  std::vector<MailboxEntry> entries;
  MailboxSeq frontier;  // the shard frontier (highest epoch's) at the read
  MailboxSeq trim;      // the user's trim
  // Entries in (after, gap_through] may have expired by TTL before the sweep moved the trim.
  std::optional<MailboxSeq> gap_through;
  bool more = false;  // more visible entries than `limit`
};

// What of a user's mailbox is visible (read_mailbox's rule, for readers of rows kept beside the entries
// such as the inbox, src/inbox/): an entry at seq s is visible iff s > trim and s <= the frontier of s's
// own epoch; an epoch without a frontier shows nothing.
struct MailboxVisibility {
  std::vector<MailboxSeq> frontiers;  // one per epoch that has a frontier, ascending; each carries its epoch
  MailboxSeq trim;                    // the user's trim

  // The frontier of `epoch`, or nullopt if that epoch has none.
  std::optional<MailboxSeq> frontier_of(Epoch epoch) const {
    for (MailboxSeq f : frontiers) {
      if (f.epoch() == epoch) return f;
    }
    return std::nullopt;
  }
  bool visible(MailboxSeq seq) const {
    if (seq <= trim) return false;
    const auto f = frontier_of(seq.epoch());
    return f && seq <= *f;
  }
};

struct SweepOutcome {
  MailboxSeq trim;  // the trim after the sweep
  uint32_t buckets_expired = 0;
};

class MailboxStore {
 public:
  // Waits for the identity writes begins left in flight (scylla, see begin_dispatch_page), so that a
  // store opened again over the same data answers every begin this one answered as Existing. A process
  // killed first may lose such a write; a replay's begin of that record then answers Fresh again, at the
  // same canonical offset when the log replays from the last finished position, and its entries are
  // rewritten at the same seq (decision 40).
  virtual ~MailboxStore() = default;

  // The backend's name ("memory", "embedded", "redis", "scylla", "scylla-lwt").
  virtual std::string_view backend_name() const = 0;

  // How many queued records the worker may finish with one frontier write: the backend's declared limit,
  // lowered (never raised) by QIM_MAILBOX_FINISH_PAGE_MAX. At least 1.
  virtual uint32_t finish_page_limit() const = 0;

  // Records an observation of a dispatch at `observed` by the owner at `epoch`. First writer wins:
  // Fresh (this observation is canonical) or Existing(canonical offset). DispatchConflict if the id is
  // known with another digest or manifest; EpochAhead if the shard holds a higher epoch (an owner with a
  // warm cache learns it within the store's fence bound, see FenceCheck, and from then on every begin,
  // write and finish of that shard fails with EpochAhead and writes nothing); InvalidArgument
  // for an offset >= 2^48, an epoch >= 2^16. An empty manifest is valid: a record that writes no entry (a
  // recall's record naming only former recipients, decision 160). Nothing is written on error.
  virtual Result<BeginOutcome> begin_dispatch(ShardId shard, Epoch epoch, const DispatchIdentity& identity,
                                              Offset observed) = 0;

  // Begins a page of records of one shard: the same outcome, record by record in page order, as calling
  // begin_dispatch for each one after the other (a record seen earlier in the page counts as seen), but
  // the backend's identity reads are issued together and then its identity writes together (on CQL two
  // round trips for the page instead of two per record, ADR-0022 section 4). One result per request, in
  // order: a record's own refusal (InvalidArgument, DispatchConflict, or its identity read or write
  // failing) is its result and the other records are still begun. The call itself fails, beginning
  // nothing, for an epoch >= 2^16, a shard outside the map, a failed frontier read or EpochAhead.
  // On scylla the identity writes may still be in flight when this returns (they overlap write_chunks);
  // such a write's failure then comes from the finish that would pass the record, not from here.
  virtual Result<std::vector<Result<BeginOutcome>>> begin_dispatch_page(
      ShardId shard, Epoch epoch, std::span<const BeginRequest> page) = 0;

  // Upserts the entries of begun chunks at compose(epoch, canonical), with their retention proofs and
  // ledger registration; idempotent. InvalidArgument for a chunk index outside the manifest, a recipient
  // count that differs from it, or a recipient of another shard; Invariant for a dispatch not begun.
  virtual Status write_chunks(ShardId shard, Epoch epoch, std::span<const ChunkWrite> chunks) = 0;

  // Advances the frontier over one record. The 64 advances must be equal (else Invariant "independent
  // lane advance not implemented"), expected_previous must equal the frontier (else WatermarkGap),
  // every chunk must be written (else Incomplete), and the record's identity write must have landed (an
  // identity write begin left in flight is waited for here; its error fails the finish, the frontier
  // stays, and the caller begins the record again). A non-canonical observation is a zero advance.
  virtual Result<FinishOutcome> finish_dispatch(ShardId shard, Epoch epoch, const DispatchId& dispatch_id,
                                                const LaneAdvances& advances) = 0;

  // Finishes up to finish_page_limit() chained records with at most one frontier write, to the last
  // advancing record's observed seq. Any failing record fails the whole page; the frontier stays.
  virtual Result<PageOutcome> finish_dispatch_page(ShardId shard, Epoch epoch,
                                                   std::span<const PageItem> page) = 0;

  // The 64 lane watermarks of a shard (all equal to the frontier; one read). EpochAhead if the stored
  // frontier's epoch is above `epoch`; CorruptEntry if the frontier row fails its check.
  virtual Result<std::array<MailboxSeq, kLanes>> lane_watermarks(ShardId shard, Epoch epoch) = 0;

  // Entries of a user's mailbox after a cursor, each epoch's only up to that epoch's own frontier (an
  // older epoch's entries above its last frontier are never shown). One entries read per epoch whose
  // frontier is above the cursor: one when the cursor is in the current epoch. ExpiredCursor for a
  // non-zero cursor below the trim; ProofMissing if an expired, unswept bucket has no proof (fail closed).
  virtual Result<MailboxPage> read_mailbox(const MailboxQuery& query) = 0;

  // The user's visibility: every epoch's frontier of the user's shard (one read) and the user's trim (one
  // read). InvalidArgument for an empty user; CorruptEntry for a frontier row that fails its check.
  virtual Result<MailboxVisibility> visibility(const UserId& user) = 0;
  // visibility() of each of `users`, in order (a page of conversations' direct peers, docs/adr/0163):
  // each distinct shard's frontiers read once and the users' trims read together (on CQL two round
  // trips, whatever the number of users). InvalidArgument for an empty user (nothing read); the first
  // failed read fails the call, as visibility() would.
  virtual Result<std::vector<MailboxVisibility>> visibilities(std::span<const UserId> users) = 0;

  // What is known of a dispatch's progress; NotFound if the identity is unknown.
  virtual Result<DispatchProgress> dispatch_progress(ShardId shard, Epoch epoch,
                                                     const DispatchId& dispatch_id) = 0;

  // Removes finished dispatch bookkeeping; returns how many rows it removed (always 0 on scylla).
  virtual Result<uint64_t> gc_completed_dispatches() = 0;

  // Moves the user's trim past every expired bucket, in day order, each only with its proof. A bucket
  // without a proof stops the sweep (ProofMissing) and the trim stays where the proofs allow.
  virtual Result<SweepOutcome> sweep_retention(const UserId& user) = 0;

  // The users of `shard` with a retention ledger (the ones sweep_retention has work for), ascending by
  // id, strictly after `after` (empty: from the first), at most `limit`: fewer than `limit` means the
  // listing is complete. A user once listed stays listed. InvalidArgument for a shard outside the map or
  // a limit outside 1..1000.
  virtual Result<std::vector<UserId>> list_retention_users(ShardId shard, const std::string& after,
                                                           uint32_t limit) = 0;

  // The mailbox half of a recall (docs/adr/0129, 0157, 0160): removes the body from the entries that message
  // `recall.target`'s SEND wrote in `shard` for `users` (all of `shard`: the recall's recipients there and
  // the former recipients its record names, members removed since, who get no entry of it),
  // and the text from the ~edit entries each of `recall.edits` wrote for them (each keeps its JSON with
  // "body":"", the bytes fanout dispatches for that edit read again after the recall), in every epoch
  // whose identity of the SEND or edit is still kept (31 days, past retention), so the engine holds
  // neither. An entry that was never written, expired or was swept is not created; the rest of an entry
  // (id, sender, time, seq, expiry) stays. Idempotent. The owner calls it when it materialises the
  // recall entry, before the recall's finish, so a crash in between redoes it. A user not in `users` keeps
  // their entry as it is (a former recipient past the record's bound, decision 160; a recall made before
  // that decision named none). InvalidArgument for a user of another shard
  // or an epoch >= 2^16; EpochAhead as write_chunks; the backend's errors (nothing to undo: a retry
  // completes it).
  virtual Status redact_message(ShardId shard, Epoch epoch, const RecallEntry& recall,
                                std::span<const UserId> users) = 0;

  // Operations issued so far, by kind.
  virtual OpCounts op_counts() const = 0;

  // Forgets a begun dispatch the caller will not finish (a record skipped after its begin). Nothing
  // durable changes; a later begin of the same id starts afresh. Never fails. Thread-safe.
  virtual void abandon_dispatch(ShardId /*shard*/, Epoch /*epoch*/, const DispatchId& /*dispatch_id*/) {}
  // Begun records held in process, over all shards: a gauge of the in-flight table, which holds only
  // records begun above their shard's frontier (each frontier move drops what it covers). Thread-safe.
  virtual uint64_t inflight_records() const { return 0; }
};

}  // namespace qim
