#include "mailbox/contract_store.h"

#include <algorithm>
#include <bitset>
#include <iterator>
#include <string>

namespace qim {

namespace {

Error invariant(std::string msg) {
  return Error(Errc::kInvariant, std::move(msg));
}
Error invalid(std::string msg) {
  return Error(Errc::kInvalidArgument, std::move(msg));
}

Status check_epoch_ahead(MailboxSeq frontier, ShardId shard, Epoch epoch) {
  if (frontier.epoch() > epoch) {
    return Error(Errc::kEpochAhead, "shard " + std::to_string(shard.value) + " holds a frontier at epoch " +
                                        std::to_string(frontier.epoch().value) +
                                        ", above the configured epoch " + std::to_string(epoch.value));
  }
  return {};
}

}  // namespace

LaneAdvances uniform_advances(MailboxSeq expected_previous, MailboxSeq observed) {
  LaneAdvances out;
  out.reserve(kLanes);
  for (uint32_t l = 0; l < kLanes; ++l) out.push_back(LaneAdvance{Lane{l}, expected_previous, observed});
  return out;
}

Status check_uniform_advances(const LaneAdvances& advances) {
  std::bitset<kLanes> seen;
  for (const auto& a : advances) {
    QIM_RETURN_IF_ERROR(check_lane(a.lane));
    if (seen.test(a.lane.value))
      return invalid("lane " + std::to_string(a.lane.value) + " is advanced twice");
    seen.set(a.lane.value);
  }
  if (advances.size() != kLanes) {
    return invariant("independent lane advance not implemented: " + std::to_string(advances.size()) +
                     " of 64 lanes advanced");
  }
  for (const auto& a : advances) {
    if (a.expected_previous != advances[0].expected_previous || a.observed != advances[0].observed) {
      return invariant("independent lane advance not implemented: lane " + std::to_string(a.lane.value) +
                       " differs from lane " + std::to_string(advances[0].lane.value));
    }
  }
  return {};
}

ContractStore::ContractStore(std::unique_ptr<StoreBackend> backend, BackendContext context,
                             std::optional<uint32_t> page_max, FenceCheck fence, EntrySink* sink)
    : backend_(std::move(backend)), context_(std::move(context)), fence_(fence), sink_(sink) {
  fence_.every_ms = std::max<int64_t>(0, fence_.every_ms);
  fence_.every_pages = std::max<uint32_t>(1, fence_.every_pages);
  page_limit_ = std::max<uint32_t>(1, backend_->declared_page_limit());
  if (page_max) page_limit_ = std::clamp<uint32_t>(*page_max, 1, page_limit_);
}

// A store dropped and opened again over the same data (a graceful restart, a test's) must find every
// claim its begins answered: without this wait a write still in flight could land after the new store read
// the identity, which would answer Fresh where the old store had claimed it.
ContractStore::~ContractStore() {
  std::lock_guard lock(shards_mu_);
  for (auto& [shard, state] : shards_) {
    std::lock_guard shard_lock(state->mu);
    state->inflight.wait_identity_writes();
  }
}

Result<ContractStore::ShardState*> ContractStore::shard_state(ShardId shard) {
  QIM_RETURN_IF_ERROR(context_.shards.check(shard));
  std::lock_guard lock(shards_mu_);
  auto& slot = shards_[shard.value];
  if (!slot) slot = std::make_unique<ShardState>();
  return slot.get();
}

Error ContractStore::fenced(ShardId shard, Epoch epoch, MailboxSeq stored, std::string_view how) const {
  return Error(Errc::kEpochAhead,
               "shard " + std::to_string(shard.value) + " was taken over: it holds a frontier at epoch " +
                   std::to_string(stored.epoch().value) + " (" + stored.to_string() +
                   "), above this owner's epoch " + std::to_string(epoch.value) + "; found " +
                   std::string(how) + " (fence check every " + std::to_string(fence_.every_ms) + " ms or " +
                   std::to_string(fence_.every_pages) + " pages)");
}

Error ContractStore::after_failed_write(ShardState& state, ShardId shard, Epoch epoch, const Error& failure,
                                        std::string_view what) {
  // A refused or lost write may mean a newer owner took the shard: look now (a fence check), so the owner
  // stops with the same EpochAhead on every backend (redis refuses a stale frontier write itself).
  auto stored = backend_->read_frontier(shard);
  if (!stored.ok() || !*stored || (*stored)->epoch() <= epoch) return failure;
  state.frontier = **stored;
  state.checked_ms = context_.clock->now_ms();
  state.pages_since_check = 0;
  return fenced(shard, epoch, **stored,
                "after a failed " + std::string(what) + " (" + failure.to_string() + ")");
}

Result<MailboxSeq> ContractStore::owner_frontier(ShardState& state, ShardId shard, Epoch epoch) {
  const int64_t now = context_.clock->now_ms();
  const bool due =
      state.frontier && state.frontier->epoch() <= epoch &&
      (now - state.checked_ms >= fence_.every_ms || state.pages_since_check >= fence_.every_pages);
  if (!state.frontier || due) {
    QIM_ASSIGN_OR_RETURN(auto stored, backend_->read_frontier(shard));
    const MailboxSeq current = stored.value_or(MailboxSeq{});
    state.checked_ms = now;
    state.pages_since_check = 0;
    if (due) {
      if (current.epoch() > epoch) {
        state.frontier = current;  // every later call fails too
        return fenced(shard, epoch, current, "by the periodic fence check");
      }
      // Our own epoch's row: the cache, kept by this owner's writes, stays authoritative for the chain.
      // A cache of a lower epoch is not ours (this process owned the shard before, another owner may have
      // moved it since): the stored frontier replaces it.
      if (state.frontier->epoch() < epoch) state.frontier = current;
    } else {
      state.frontier = current;
    }
  }
  QIM_RETURN_IF_ERROR(check_epoch_ahead(*state.frontier, shard, epoch));
  return *state.frontier;
}

Result<BeginOutcome> ContractStore::begin_dispatch(ShardId shard, Epoch epoch,
                                                   const DispatchIdentity& identity, Offset observed) {
  const BeginRequest one{&identity, observed};
  QIM_ASSIGN_OR_RETURN(auto begun, begin_dispatch_page(shard, epoch, std::span(&one, 1)));
  return std::move(begun.front());
}

namespace {

// What begin_dispatch refuses of a record before anything is read or written.
Status check_begin_request(const BeginRequest& r) {
  if (r.identity == nullptr) return invalid("begin request without an identity");
  QIM_RETURN_IF_ERROR(check_offset(r.observed));
  QIM_RETURN_IF_ERROR(validate_manifest(r.identity->manifest));
  if (r.identity->id.empty()) return invalid("dispatch id is empty");
  return {};
}

}  // namespace

Result<std::vector<Result<BeginOutcome>>> ContractStore::begin_dispatch_page(
    ShardId shard, Epoch epoch, std::span<const BeginRequest> page) {
  QIM_RETURN_IF_ERROR(check_epoch(epoch));
  std::vector<Status> checked;
  checked.reserve(page.size());
  for (const BeginRequest& r : page) checked.push_back(check_begin_request(r));
  QIM_ASSIGN_OR_RETURN(ShardState * state, shard_state(shard));
  std::lock_guard lock(state->mu);
  QIM_ASSIGN_OR_RETURN(MailboxSeq frontier, owner_frontier(*state, shard, epoch));

  // One claim per distinct id, made by its first valid observation in the page. A later observation of
  // the same id finds what that claim left, exactly as if it had claimed after it.
  std::vector<IdentityClaim> claims;
  std::vector<size_t> claimer;  // the page index of each claim's request
  std::vector<size_t> claim_of(page.size(), 0);
  std::map<std::string_view, size_t> first;
  for (size_t i = 0; i < page.size(); ++i) {
    if (!checked[i].ok()) continue;
    auto [it, fresh] = first.try_emplace(page[i].identity->id.str(), claims.size());
    if (fresh) {
      claims.push_back(IdentityClaim{page[i].identity, page[i].observed});
      claimer.push_back(i);
      // An identity write an earlier begin of this id left in flight lands before the claim reads the id,
      // so the read sees what a claim one after the other would. A failed one stays with the record until
      // this claim answers (the read tells what is stored). Usually none is pending: a finish waits for it.
      if (InflightRecord* rec = state->inflight.find(page[i].identity->id); rec && rec->identity_write) {
        if (rec->identity_write->wait().ok()) rec->identity_write.reset();
      }
    }
    claim_of[i] = it->second;
  }
  auto stored = backend_->claim_identities(shard, epoch, claims);
  if (stored.size() != claims.size()) {
    return invariant("backend " + std::string(backend_->name()) + " answered " +
                     std::to_string(stored.size()) + " of " + std::to_string(claims.size()) +
                     " identity claims");
  }
  std::vector<Result<BeginOutcome>> out;
  out.reserve(page.size());
  for (size_t i = 0; i < page.size(); ++i) {
    if (!checked[i].ok()) {
      out.emplace_back(checked[i].error());
      continue;
    }
    const ClaimAnswer& claimed = stored[claim_of[i]];
    if (!claimed.stored.ok()) {
      out.emplace_back(claimed.stored.error());
      continue;
    }
    std::optional<StoredIdentity> existing = *claimed.stored;
    const IdentityClaim& by = claims[claim_of[i]];
    const bool claimer_here = claimer[claim_of[i]] == i;
    if (!existing && !claimer_here) existing = StoredIdentity{*by.identity, by.observed};
    out.push_back(settle_begin(*state, frontier, epoch, *page[i].identity, page[i].observed, existing));
    // The claim's answer is the truth about the identity's write: still in flight (finish_locked waits for
    // it before the frontier passes the record), or nothing pending (found, or already stored).
    if (claimer_here && out.back().ok()) {
      if (InflightRecord* rec = state->inflight.find(page[i].identity->id))
        rec->identity_write = claimed.pending;
    }
  }
  return out;
}

Result<BeginOutcome> ContractStore::settle_begin(ShardState& state, MailboxSeq frontier, Epoch epoch,
                                                 const DispatchIdentity& identity, Offset observed,
                                                 const std::optional<StoredIdentity>& existing) {
  BeginOutcome out;
  out.canonical_offset = observed;
  if (existing) {
    if (existing->identity.digest != identity.digest || existing->identity.manifest != identity.manifest) {
      return Error(Errc::kDispatchConflict,
                   "dispatch " + identity.id.str() + " was first observed at offset " +
                       std::to_string(existing->canonical_offset.value) + " with another " +
                       (existing->identity.digest != identity.digest ? "digest" : "manifest"));
    }
    out.kind = BeginKind::kExisting;
    out.canonical_offset = existing->canonical_offset;
  }
  out.seq = *compose(epoch, out.canonical_offset);
  out.canonical = out.canonical_offset == observed;
  const bool covered = frontier.epoch() == epoch && frontier >= out.seq;
  InflightRecord* tracked = state.inflight.find(identity.id);
  const bool tracked_same =
      tracked && tracked->epoch == epoch && tracked->canonical_offset == out.canonical_offset;
  // Entries are known written when the frontier covers them, or when the record is in flight here and
  // either complete or about to be written by its canonical observation earlier in this worker's queue.
  out.needs_entries = !covered && !(tracked_same && (tracked->complete() || !out.canonical));
  state.inflight.track(epoch, identity, out.canonical_offset, covered);
  return out;
}

Status ContractStore::write_chunks(ShardId shard, Epoch epoch, std::span<const ChunkWrite> chunks) {
  QIM_RETURN_IF_ERROR(check_epoch(epoch));
  QIM_ASSIGN_OR_RETURN(ShardState * state, shard_state(shard));
  std::vector<MailboxEntry> entries;
  {
    // Validate everything before writing anything: bad input leaves nothing half-written.
    std::lock_guard lock(state->mu);
    QIM_RETURN_IF_ERROR(owner_frontier(*state, shard, epoch));  // a fenced owner writes nothing more
    for (const auto& c : chunks) {
      InflightRecord* rec = state->inflight.find(c.dispatch_id);
      if (!rec || rec->epoch != epoch) return invariant("dispatch " + c.dispatch_id.str() + " was not begun");
      const auto& counts = rec->identity.manifest.entry_counts;
      if (c.chunk_index >= counts.size()) {
        return invalid("chunk index " + std::to_string(c.chunk_index) + " out of range: dispatch " +
                       c.dispatch_id.str() + " has " + std::to_string(counts.size()) + " chunks");
      }
      if (c.recipients.size() != counts[c.chunk_index]) {
        return invalid("chunk " + std::to_string(c.chunk_index) + " of dispatch " + c.dispatch_id.str() +
                       " has " + std::to_string(c.recipients.size()) + " entries, manifest says " +
                       std::to_string(counts[c.chunk_index]));
      }
      if (c.message == nullptr) return invalid("chunk " + std::to_string(c.chunk_index) + " has no message");
      QIM_RETURN_IF_ERROR(validate_message(*c.message));
      const MailboxSeq seq = *compose(epoch, rec->canonical_offset);
      for (const auto& user : c.recipients) {
        if (context_.shards.shard_of(user) != shard) {
          return invalid("recipient " + user.str() + " belongs to shard " +
                         std::to_string(context_.shards.shard_of(user).value) + ", not " +
                         std::to_string(shard.value));
        }
        entries.push_back(MailboxEntry{user, seq, *c.message});
      }
    }
  }
  // What is kept beside the entries (the inbox) is begun with them and lands before the chunks count as
  // written, so the frontier never passes an entry whose sink rows are missing; on failure of either the
  // chunks stay unwritten and the retry (or the replay after a crash) writes entries and sink rows again,
  // both idempotent upserts. The sink is waited for whatever the entries' outcome: it reads `entries`.
  std::unique_ptr<EntrySink::Pending> sink_write;
  if (sink_ != nullptr && !entries.empty()) sink_write = sink_->begin(shard, epoch, entries);
  const Status entries_written = backend_->write_entries(shard, epoch, entries);
  const Status sink_written = sink_write ? sink_write->wait(entries_written.ok()) : Status{};
  if (!entries_written.ok()) {
    std::lock_guard lock(state->mu);
    return after_failed_write(*state, shard, epoch, entries_written.error(), "entry write");
  }
  if (!sink_written.ok()) {
    std::lock_guard lock(state->mu);
    return after_failed_write(*state, shard, epoch, sink_written.error(), "entry sink write");
  }
  std::lock_guard lock(state->mu);
  for (const auto& c : chunks) {
    if (InflightRecord* rec = state->inflight.find(c.dispatch_id); rec && rec->epoch == epoch) {
      rec->chunk_written[c.chunk_index] = true;
    }
  }
  return {};
}

Result<FinishOutcome> ContractStore::finish_dispatch(ShardId shard, Epoch epoch,
                                                     const DispatchId& dispatch_id,
                                                     const LaneAdvances& advances) {
  QIM_ASSIGN_OR_RETURN(ShardState * state, shard_state(shard));
  std::lock_guard lock(state->mu);
  const PageItem item{dispatch_id, advances};
  QIM_ASSIGN_OR_RETURN(PageOutcome page, finish_locked(*state, shard, epoch, std::span(&item, 1)));
  return FinishOutcome{page.advanced_records > 0, page.frontier};
}

Result<PageOutcome> ContractStore::finish_dispatch_page(ShardId shard, Epoch epoch,
                                                        std::span<const PageItem> page) {
  if (page.empty()) return invalid("empty page");
  if (page.size() > page_limit_) {
    return invalid("page of " + std::to_string(page.size()) + " records exceeds the page limit " +
                   std::to_string(page_limit_));
  }
  QIM_ASSIGN_OR_RETURN(ShardState * state, shard_state(shard));
  std::lock_guard lock(state->mu);
  return finish_locked(*state, shard, epoch, page);
}

Result<PageOutcome> ContractStore::finish_locked(ShardState& state, ShardId shard, Epoch epoch,
                                                 std::span<const PageItem> page) {
  QIM_RETURN_IF_ERROR(check_epoch(epoch));
  QIM_ASSIGN_OR_RETURN(const MailboxSeq frontier, owner_frontier(state, shard, epoch));
  MailboxSeq running = frontier;
  uint32_t advanced = 0;
  // Check the whole page first; any failing record fails the page and nothing is written.
  for (const auto& item : page) {
    QIM_RETURN_IF_ERROR(check_uniform_advances(item.advances));
    const MailboxSeq prev = item.advances[0].expected_previous;
    const MailboxSeq observed = item.advances[0].observed;
    InflightRecord* rec = state.inflight.find(item.dispatch_id);
    if (!rec || rec->epoch != epoch)
      return invariant("dispatch " + item.dispatch_id.str() + " was not begun");
    if (prev != running) {
      // A cache of an older epoch than the caller's was left by an earlier ownership of this process: the
      // new owner chains on the stored frontier, so reload it for the retry.
      if (frontier.epoch() < epoch) state.frontier.reset();
      return Error(Errc::kWatermarkGap, "dispatch " + item.dispatch_id.str() + " expects previous " +
                                            prev.to_string() + " but the frontier is at " +
                                            running.to_string());
    }
    if (observed.epoch() != epoch || observed <= prev) {
      return invariant("dispatch " + item.dispatch_id.str() + " advance " + prev.to_string() + " -> " +
                       observed.to_string() + " does not move forward within epoch " +
                       std::to_string(epoch.value));
    }
    const MailboxSeq canonical = *compose(epoch, rec->canonical_offset);
    if (observed != canonical || canonical <= running) continue;  // repeated observation: zero advance
    if (!rec->complete()) {
      return Error(Errc::kIncomplete, "dispatch " + item.dispatch_id.str() + " has " +
                                          std::to_string(rec->completed_chunks().size()) + " of " +
                                          std::to_string(rec->chunk_written.size()) + " chunks written");
    }
    // The identity must be stored before the frontier passes the record, or a replay of the id at another
    // offset would be claimed afresh and shown twice. Its write ran during the entry writes, so this wait
    // is usually over at once. A failed write fails the page; the retry begins the record again.
    if (rec->identity_write) {
      if (Status stored = rec->identity_write->wait(); !stored.ok()) {
        return after_failed_write(state, shard, epoch, stored.error(), "identity write");
      }
      rec->identity_write.reset();
    }
    running = observed;
    ++advanced;
  }
  PageOutcome out{running, advanced, 0};
  if (advanced > 0) {
    auto& c = backend_->counters();
    Status written = backend_->write_frontier(shard, epoch, frontier, running);
    if (!written.ok()) {
      state.frontier.reset();  // the write may or may not have landed: reload before the next finish
      return after_failed_write(state, shard, epoch, written.error(), "frontier write");
    }
    state.frontier = running;
    state.pages_since_check++;
    out.frontier_writes = 1;
    c.frontier_writes++;
    c.pages++;
    c.paged_records += page.size();
  }
  for (const auto& item : page) state.inflight.erase(item.dispatch_id);
  // Records the frontier now covers can never be finished again: records skipped after their begin, and
  // records a worker dropped after an uncertain finish that landed. Dropping them here keeps the table
  // bounded by what is begun above the frontier.
  state.inflight.erase_covered(running);
  return out;
}

void ContractStore::abandon_dispatch(ShardId shard, Epoch epoch, const DispatchId& dispatch_id) {
  auto state = shard_state(shard);
  if (!state.ok()) return;
  std::lock_guard lock((*state)->mu);
  if (InflightRecord* rec = (*state)->inflight.find(dispatch_id); rec && rec->epoch == epoch) {
    // Its identity write lands before the record is forgotten, so that a later begin of the id (a replay)
    // reads what this begin claimed, as it would had the write not overlapped anything.
    if (rec->identity_write) (void)rec->identity_write->wait();
    (*state)->inflight.erase(dispatch_id);
  }
}

uint64_t ContractStore::inflight_records() const {
  std::lock_guard lock(shards_mu_);
  uint64_t n = 0;
  for (const auto& [shard, state] : shards_) {
    std::lock_guard shard_lock(state->mu);
    n += state->inflight.size();
  }
  return n;
}

Result<std::array<MailboxSeq, kLanes>> ContractStore::lane_watermarks(ShardId shard, Epoch epoch) {
  QIM_RETURN_IF_ERROR(check_epoch(epoch));
  QIM_RETURN_IF_ERROR(context_.shards.check(shard));
  QIM_ASSIGN_OR_RETURN(auto stored, backend_->read_frontier(shard));
  const MailboxSeq frontier = stored.value_or(MailboxSeq{});
  QIM_RETURN_IF_ERROR(check_epoch_ahead(frontier, shard, epoch));
  std::array<MailboxSeq, kLanes> out;
  out.fill(frontier);
  return out;
}

Result<MailboxPage> ContractStore::read_mailbox(const MailboxQuery& query) {
  if (query.user.empty()) return invalid("mailbox read without a user");
  if (query.limit == 0 || query.limit > 1000) return invalid("read limit must be 1..1000");
  const ShardId shard = context_.shards.shard_of(query.user);
  QIM_ASSIGN_OR_RETURN(std::vector<MailboxSeq> frontiers, backend_->read_frontiers(shard));
  QIM_ASSIGN_OR_RETURN(RetentionLedger ledger, backend_->read_ledger(query.user));
  MailboxPage page;
  page.frontier = frontiers.empty() ? MailboxSeq{} : frontiers.back();
  page.trim = ledger.trim;
  if (!query.after.is_zero() && query.after < ledger.trim) {
    return Error(Errc::kExpiredCursor, "cursor " + query.after.to_string() + " of " + query.user.str() +
                                           " is below the trim " + ledger.trim.to_string());
  }
  const MailboxSeq from = std::max(query.after, ledger.trim);
  const int64_t now = context_.clock->now_ms();
  for (DayBucket b : ledger.live_buckets) {
    if (!context_.bucket_expired(b, now)) continue;
    // Entries of this bucket may be gone by TTL while the trim has not moved: report the gap, bounded by
    // the bucket's proof. Without a proof the gap cannot be bounded: fail closed.
    QIM_ASSIGN_OR_RETURN(auto proof, backend_->read_bucket_proof(query.user, b));
    if (!proof) {
      return Error(Errc::kProofMissing, "retention bucket " + std::to_string(b.value) + " of " +
                                            query.user.str() + " is expired and has no proof row");
    }
    if (*proof > from) page.gap_through = std::max(page.gap_through.value_or(MailboxSeq{}), *proof);
  }
  // Each epoch's entries are visible only up to that epoch's own frontier: what an owner wrote above its
  // last frontier (a record begun but never finished before a takeover) is never shown, and the new
  // owner's copy at its own epoch is the only one (our strengthening of ADR-0022,
  // docs/adr/0007-epoch-bounded-by-own-frontier.md). Epochs whose frontier is at or below the cursor hold
  // nothing new and cost nothing, so a reader following the current epoch pays one entries read; one read per
  // further epoch otherwise.
  const size_t want = size_t{query.limit} + 1;  // one more than asked: `more` is exact
  for (MailboxSeq f : frontiers) {
    if (f <= from) continue;
    const uint64_t first = compose(f.epoch(), Offset{0})->raw();
    const MailboxSeq after = std::max(from, MailboxSeq::from_raw(first == 0 ? 0 : first - 1));
    QIM_ASSIGN_OR_RETURN(
        auto part,
        backend_->read_entries(query.user, after, f, static_cast<uint32_t>(want - page.entries.size())));
    page.entries.insert(page.entries.end(), std::make_move_iterator(part.begin()),
                        std::make_move_iterator(part.end()));
    if (page.entries.size() >= want) break;
  }
  if (page.entries.size() > query.limit) {
    page.entries.resize(query.limit);
    page.more = true;
  }
  return page;
}

Result<MailboxVisibility> ContractStore::visibility(const UserId& user) {
  if (user.empty()) return invalid("visibility without a user");
  MailboxVisibility out;
  QIM_ASSIGN_OR_RETURN(out.frontiers, backend_->read_frontiers(context_.shards.shard_of(user)));
  QIM_ASSIGN_OR_RETURN(RetentionLedger ledger, backend_->read_ledger(user));
  out.trim = ledger.trim;
  return out;
}

Result<std::vector<MailboxVisibility>> ContractStore::visibilities(std::span<const UserId> users) {
  if (users.empty()) return std::vector<MailboxVisibility>{};
  // The users' shards, each read once (a page's peers share the few shards there are).
  std::vector<ShardId> shards;
  std::vector<size_t> shard_of(users.size());
  for (size_t i = 0; i < users.size(); ++i) {
    if (users[i].empty()) return invalid("visibility without a user");
    const ShardId shard = context_.shards.shard_of(users[i]);
    auto at = std::find(shards.begin(), shards.end(), shard);
    shard_of[i] = static_cast<size_t>(at - shards.begin());
    if (at == shards.end()) shards.push_back(shard);
  }
  QIM_ASSIGN_OR_RETURN(auto frontiers, backend_->read_frontiers_of(shards));
  QIM_ASSIGN_OR_RETURN(auto ledgers, backend_->read_ledgers(users));
  std::vector<MailboxVisibility> out(users.size());
  for (size_t i = 0; i < users.size(); ++i) {
    out[i].frontiers = frontiers[shard_of[i]];
    out[i].trim = ledgers[i].trim;
  }
  return out;
}

Result<DispatchProgress> ContractStore::dispatch_progress(ShardId shard, Epoch epoch,
                                                          const DispatchId& dispatch_id) {
  QIM_RETURN_IF_ERROR(check_epoch(epoch));
  QIM_ASSIGN_OR_RETURN(ShardState * state, shard_state(shard));
  std::lock_guard lock(state->mu);
  DispatchProgress out;
  if (InflightRecord* rec = state->inflight.find(dispatch_id); rec && rec->epoch == epoch) {
    out.canonical_offset = rec->canonical_offset;
    out.chunk_count = static_cast<uint32_t>(rec->chunk_written.size());
    out.completed_chunks = rec->completed_chunks();
    out.in_flight = true;
    return out;
  }
  QIM_ASSIGN_OR_RETURN(auto stored, backend_->read_identity(shard, epoch, dispatch_id));
  if (!stored) return Error(Errc::kNotFound, "dispatch " + dispatch_id.str() + " is not known at this epoch");
  QIM_ASSIGN_OR_RETURN(MailboxSeq frontier, owner_frontier(*state, shard, epoch));
  out.canonical_offset = stored->canonical_offset;
  out.chunk_count = static_cast<uint32_t>(stored->identity.manifest.chunk_count());
  if (frontier >= *compose(epoch, stored->canonical_offset)) {
    for (uint32_t i = 0; i < out.chunk_count; ++i) out.completed_chunks.push_back(i);
  }
  return out;
}

Result<std::optional<MailboxSeq>> ContractStore::lowest_live_seq(const UserId& user, MailboxSeq after,
                                                                 MailboxSeq upto, int64_t now) {
  constexpr uint32_t kPage = 1000;
  while (after < upto) {
    QIM_ASSIGN_OR_RETURN(auto entries, backend_->read_entries(user, after, upto, kPage));
    for (const MailboxEntry& e : entries) {
      if (!context_.bucket_expired(day_bucket_of(e.message.server_time_ms), now)) return std::optional(e.seq);
    }
    if (entries.size() < kPage) break;
    after = entries.back().seq;
  }
  return std::optional<MailboxSeq>();
}

Result<SweepOutcome> ContractStore::sweep_retention(const UserId& user) {
  if (user.empty()) return invalid("sweep without a user");
  QIM_ASSIGN_OR_RETURN(RetentionLedger ledger, backend_->read_ledger(user));
  const int64_t now = context_.clock->now_ms();
  SweepOutcome out{ledger.trim, 0};
  std::vector<std::pair<DayBucket, MailboxSeq>> proven;  // expired buckets with their proofs, day order
  MailboxSeq target = ledger.trim;
  std::optional<Error> blocked;
  for (DayBucket b : ledger.live_buckets) {  // ascending: the trim moves in day order
    if (!context_.bucket_expired(b, now)) break;
    QIM_ASSIGN_OR_RETURN(auto proof, backend_->read_bucket_proof(user, b));
    if (!proof) {
      blocked =
          Error(Errc::kProofMissing, "retention bucket " + std::to_string(b.value) + " of " + user.str() +
                                         " has no proof row; the trim stays at " + out.trim.to_string());
      break;
    }
    target = std::max(target, *proof);
    proven.emplace_back(b, *proof);
  }
  if (target > ledger.trim) {
    // Buckets follow the message's server time, seqs the mailbox log's order: an expired day's proof can
    // lie above an entry of a day that has not expired (docs/adr/0058-retention-trim-below-live-buckets.md).
    // The trim stops just below the lowest such entry; the buckets it does not cover yet stay in the ledger
    // (reads report their gap) and are swept once the trim can pass their proof.
    QIM_ASSIGN_OR_RETURN(auto live, lowest_live_seq(user, ledger.trim, target, now));
    out.trim = live ? std::min(target, MailboxSeq::from_raw(live->raw() - 1)) : target;
  }
  std::vector<DayBucket> expired;
  for (const auto& [b, proof] : proven) {
    if (proof <= out.trim) expired.push_back(b);
  }
  if (!expired.empty() || out.trim != ledger.trim) {
    QIM_RETURN_IF_ERROR(backend_->commit_sweep(user, ledger, out.trim, expired));
    out.buckets_expired = static_cast<uint32_t>(expired.size());
  }
  if (blocked) return *blocked;
  return out;
}

Result<std::vector<UserId>> ContractStore::list_retention_users(ShardId shard, const std::string& after,
                                                                uint32_t limit) {
  QIM_RETURN_IF_ERROR(context_.shards.check(shard));
  if (limit == 0 || limit > 1000) return invalid("retention user listing limit must be 1..1000");
  return backend_->list_ledger_users(shard, after, limit);
}

}  // namespace qim
