#include "mailbox/embedded/embedded_backend.h"

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <utility>
#include <vector>

#include "mailbox/embedded/expiry_filter.h"
#include "mailbox/embedded/insert_hint.h"
#include "mailbox/embedded/max_merge.h"
#include "mailbox/embedded/rocks_error.h"
#include "mailbox/embedded/rocks_info_log.h"
#include "mailbox/embedded/rocks_write_gate.h"
#include "mailbox/embedded/rows.h"
#include "mailbox/embedded/side_rows.h"
#include "mailbox/embedded/wal_sync.h"
#include "mailbox/store_options.h"

namespace qim {

namespace {

using embedded::rocks_status;

// Sorts (key, row) pairs by key, keeping the given order of equal keys (a later put of a key wins):
// rows put into a batch in key order land next to each other in the memtable (see write_entries).
template <typename Row>
void sort_by_key(std::vector<std::pair<std::string, Row>>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

enum Family : size_t {
  kDefault,
  kIdentity,
  kFrontier,
  kEntries,
  kProofs,
  kLedger,
  kLedgerUsers,
  kFamilyCount
};

// Registered (user, day) pairs are cached so the hot path does not read the ledger once per entry
// (ADR-0022 keeps the same cache on Scylla). Only this process writes the ledger (RocksDB locks the
// directory) and commit_sweep drops what it expires, so the cache is always a subset of the ledger.
// Past this size (over all stripes) it is simply cleared: a miss only costs one ledger read.
constexpr size_t kRegisteredCacheMax = 1 << 16;

// The identity and ledger locks are striped by shard. Each guards a read-then-write that must not
// interleave with another on the same rows (an identity claim, a ledger update), and those rows are a
// shard's: an identity's key begins with its shard, a ledger is its user's. One lock for the whole store
// made the 16 shard workers of `qim up` queue behind each other on every record, for rows no other worker
// touches: about two thread switches per message at 2,000 msg/s (docs/benchmarks.md, decision 41).
constexpr uint32_t kMaxStripes = 64;

std::string_view view(const rocksdb::Slice& s) {
  return {s.data(), s.size()};
}

bool starts_with(const rocksdb::Slice& s, std::string_view prefix) {
  return view(s).substr(0, prefix.size()) == prefix;
}

class EmbeddedBackend final : public StoreBackend {
 public:
  EmbeddedBackend(BackendContext context, std::string dir, rocksdb::Env* env)
      : context_(std::move(context)),
        dir_(std::move(dir)),
        env_(env),
        max_merge_(std::make_shared<embedded::MaxU64Merge>()),
        same_key_hint_(std::make_shared<embedded::InsertHintGroups>("qim.SameKeyHint", 0)),
        user_hint_(std::make_shared<embedded::InsertHintGroups>("qim.UserHint", sizeof(uint64_t))),
        expiry_filter_(context_.clock),
        side_merge_(std::make_shared<embedded::Max16Merge>()),
        side_filter_(context_.clock) {
    // Durability: the WAL is always on; only the frontier write (and the rare sweep) is synced.
    // RocksDB appends every column family to one write-ahead log in commit order, and a sync covers
    // every log record before it. The frontier write is the contract's commit point (clients see
    // nothing above it) and comes after the entries, proofs, ledger rows and identities it covers, so
    // syncing after it makes all of them durable; no reader of the store sees the frontier before that
    // sync (write_frontier). Unsynced writes reach the log (the OS page cache) at once, so a process
    // crash loses nothing; a power loss can only lose writes above the last frontier, which are
    // replayed because the frontier has not moved.
    // Measured with qim-store-bench (one-to-one, 1 shard, this 2-core machine shared with other
    // builds, so wide ranges): syncing every batch too gave 0.7-0.8k records/s at page limit 64 (an
    // fsync per identity claim) against 12k-43k with the frontier alone, for no durability gained.
    // A batch written alongside others (RocksDB then inserts the batches in parallel) keeps where its
    // previous row went in each memtable, as a serial insert does: see write_entries.
    write_.memtable_insert_hint_per_batch = true;
    sweep_write_.sync = true;  // rare, and a trim must not move back after a power loss
  }

  ~EmbeddedBackend() override {
    // An attached inbox stops using the database (and waits for its readers) before it closes.
    if (embedded::SideRows* side = side_.exchange(nullptr)) side->detach();
    for (auto* h : side_handles_) {
      if (h != nullptr) db_->DestroyColumnFamilyHandle(h);
    }
    for (auto* h : handles_) {
      if (h != nullptr) db_->DestroyColumnFamilyHandle(h);
    }
    if (db_) db_->Close().PermitUncheckedError();  // a failed close loses nothing: the WAL has it all
  }

  Status open() {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) return Error(Errc::kIo, "embedded store: cannot create " + dir_ + ": " + ec.message());
    rocksdb::DBOptions db_options;
    db_options.create_if_missing = true;
    db_options.create_missing_column_families = true;
    if (env_ != nullptr) db_options.env = env_;
    db_options.max_background_jobs = 2;
    db_options.keep_log_file_num = 4;
    // Writers wait for the write group's leader without spinning first: on 2 cores the spin only takes
    // the CPU the leader needs. No measurable change either way (docs/benchmarks.md, "Embedded against
    // the relay: fewer syncs"); the published figures were taken with it.
    db_options.enable_write_thread_adaptive_yield = false;
    // Through a full disk: learns of the error that stops the database and resumes it (rocks_write_gate.h).
    db_options.listeners.push_back(gate_);
    db_options.info_log = embedded::rocks_info_log("mailbox store");  // not a LOG file on the data disk
    // Insert hints (insert_hint.h): a frontier or proof row is merged again and again under the same
    // key, and a user's entries arrive in seq order.
    rocksdb::ColumnFamilyOptions merged;
    merged.merge_operator = max_merge_;
    merged.memtable_insert_with_hint_prefix_extractor = same_key_hint_;
    rocksdb::ColumnFamilyOptions entries;
    entries.compaction_filter = &expiry_filter_;
    entries.memtable_insert_with_hint_prefix_extractor = user_hint_;
    // Nearly every claim reads an identity that is not there (a record seen for the first time), and
    // the rows live 31 days, so the family only grows: Bloom filters in its memtables and table files
    // answer such a miss without searching the skip list or reading a block of every level.
    rocksdb::ColumnFamilyOptions identity;
    rocksdb::BlockBasedTableOptions identity_tables;
    identity_tables.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    identity.table_factory.reset(rocksdb::NewBlockBasedTableFactory(identity_tables));
    identity.memtable_prefix_bloom_size_ratio = 0.02;
    identity.memtable_whole_key_filtering = true;
    std::vector<rocksdb::ColumnFamilyDescriptor> families = {
        {rocksdb::kDefaultColumnFamilyName, {}},          {std::string(embedded::kIdentityFamily), identity},
        {std::string(embedded::kFrontierFamily), merged}, {std::string(embedded::kEntriesFamily), entries},
        {std::string(embedded::kProofsFamily), merged},   {std::string(embedded::kLedgerFamily), {}},
        {std::string(embedded::kLedgerUsersFamily), {}},
    };
    // The inbox's families (side_rows.h), opened whether or not an inbox attaches: RocksDB opens a
    // database only with all its families, and their merged rows need their operator to compact.
    const auto side_options = embedded::side_family_options(side_merge_, &side_filter_);
    for (size_t i = 0; i < embedded::kSideFamilyCount; ++i) {
      families.emplace_back(std::string(embedded::kSideFamilyNames[i]), side_options[i]);
    }
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    QIM_RETURN_IF_ERROR(
        rocks_status(rocksdb::DB::Open(db_options, dir_, families, &handles, &db), "open " + dir_));
    db_.reset(db);
    std::copy(handles.begin(), handles.begin() + kFamilyCount, handles_.begin());
    std::copy(handles.begin() + kFamilyCount, handles.end(), side_handles_.begin());
    gate_->attach(db_.get());
    syncer_ = std::make_unique<embedded::WalSyncer>(*db_, gate_.get());
    return {};
  }

  std::string_view name() const override { return "embedded"; }
  uint32_t declared_page_limit() const override { return 64; }

  // One claim is a page of one: the same lock, read and write as claim_identities.
  Result<std::optional<StoredIdentity>> claim_identity(ShardId shard, Epoch epoch,
                                                       const DispatchIdentity& identity,
                                                       Offset observed) override {
    const IdentityClaim one{&identity, observed};
    return std::move(claim_identities(shard, epoch, std::span(&one, 1)).front().stored);
  }

  // The page's claims under one hold of the stripe's lock, their writes as one batch: a RocksDB write
  // per claim was over half of the shard workers' CPU at 8,000 msg/s once the lock stopped serialising
  // them (decision 41). Nothing is left pending: the batch is written (not synced, like every write but
  // the frontier's) before this returns.
  std::vector<ClaimAnswer> claim_identities(ShardId shard, Epoch epoch,
                                            std::span<const IdentityClaim> claims) override {
    std::vector<ClaimAnswer> out;
    out.reserve(claims.size());
    std::lock_guard lock(identity_mu(shard));
    std::vector<size_t> claimed;  // indexes into `out` of the claims this batch stores
    std::vector<std::pair<std::string, std::string>> rows;  // their rows, put in key order (write_entries)
    const int64_t expires = context_.clock->now_ms() + kDispatchIdentityTtlSeconds * 1000;
    for (const IdentityClaim& c : claims) {
      std::string key = embedded::identity_key(shard, epoch, c.identity->id);
      auto stored = live_identity(key, c.identity->id);
      if (stored.ok() && !*stored) {
        claimed.push_back(out.size());
        rows.emplace_back(std::move(key),
                          embedded::identity_value(StoredIdentity{*c.identity, c.observed}, expires));
      }
      out.push_back(ClaimAnswer{std::move(stored), nullptr});
    }
    if (claimed.empty()) return out;
    sort_by_key(rows);
    rocksdb::WriteBatch batch;
    for (const auto& [key, value] : rows) {
      if (Status b = rocks_status(batch.Put(handles_[kIdentity], key, value), "batch identity"); !b.ok()) {
        for (size_t i : claimed) out[i].stored = b.error();  // nothing of the batch is written
        return out;
      }
    }
    if (Status w = rocks_status(gated([&] { return db_->Write(write_, &batch); }), "write identities");
        !w.ok()) {
      for (size_t i : claimed) out[i].stored = w.error();  // none of them is stored
      return out;
    }
    counters_.inserts += claimed.size();
    return out;
  }

  Result<std::optional<StoredIdentity>> read_identity(ShardId shard, Epoch epoch,
                                                      const DispatchId& id) override {
    return live_identity(embedded::identity_key(shard, epoch, id), id);
  }

  // The rows go into the batch in key order (a user's entries one after another), and a user's proofs
  // of one day as one merge, since the max is all a proof keeps. RocksDB inserts a batch's rows into
  // the memtable's skip list starting each search from where the row before it went (a batch with
  // merges, and every batch a write group inserts serially, does so), so rows in key order land next
  // to each other instead of each searching from the top: that search was a quarter of the shard
  // workers' CPU at 8,000 msg/s (docs/benchmarks.md, "Rows in key order").
  Status write_entries(ShardId, Epoch epoch, std::span<const MailboxEntry> entries) override {
    if (entries.empty()) return {};
    const int64_t expires = context_.clock->now_ms() + context_.entry_ttl_ms();
    std::vector<std::pair<std::string, const MailboxEntry*>> rows;
    rows.reserve(entries.size());
    std::map<std::string, uint64_t> proofs;  // key -> the highest seq of the page, in key order
    std::set<std::pair<std::string, int64_t>> buckets;
    std::set<uint32_t> stripes;  // a shard's entries are its users', so one stripe unless a caller mixes
    for (const auto& e : entries) {
      stripes.insert(stripe_of(context_.shards.shard_of(e.user)));
      const DayBucket day = day_bucket_of(e.message.server_time_ms);
      rows.emplace_back(embedded::entry_key(e.user, e.seq), &e);
      auto [proof, fresh] = proofs.try_emplace(embedded::proof_key(e.user, day, epoch), e.seq.raw());
      if (!fresh) proof->second = std::max(proof->second, e.seq.raw());
      buckets.emplace(e.user.str(), day.value);
    }
    sort_by_key(rows);
    rocksdb::WriteBatch batch;
    for (const auto& [key, e] : rows) {
      QIM_RETURN_IF_ERROR(rocks_status(
          batch.Put(handles_[kEntries], key, embedded::entry_value(e->message, expires)), "batch entry"));
    }
    for (const auto& [key, seq] : proofs) {
      QIM_RETURN_IF_ERROR(
          rocks_status(batch.Merge(handles_[kProofs], key, embedded::u64_value(seq)), "batch proof"));
    }
    // The ledger locks cover the write so a concurrent sweep's compare-and-set sees the registration;
    // taken in ascending order (a std::set), so writers that need several never deadlock.
    std::vector<std::unique_lock<std::mutex>> locks;
    for (uint32_t i : stripes) locks.emplace_back(ledgers_[i].mu);
    QIM_RETURN_IF_ERROR(register_buckets(buckets, batch));
    QIM_RETURN_IF_ERROR(rocks_status(gated([&] { return db_->Write(write_, &batch); }), "write entries"));
    counters_.inserts += rows.size() + proofs.size();  // the entries and their bucket proofs
    for (const auto& bucket : buckets) ledger_of(bucket.first).registered.insert(bucket);
    return {};
  }

  // Each entry read, and written back with its expiry and an empty body; the older version of the row
  // goes from RocksDB's files as any overwritten row does, when compaction rewrites them.
  Status redact_entries(std::span<const EntryKey> entries) override {
    return redact_edit_entries(entries, [](std::string_view, std::string_view body) {
      return body.empty() ? std::nullopt : std::optional<std::string>(std::in_place);
    });
  }

  // As redact_entries, the body replaced by what `redact` answers. One process holds the directory, and
  // the node writes a shard's entries from one thread (the recall's page), so read-then-write loses none.
  Status redact_edit_entries(std::span<const EntryKey> entries, const EntryBodyRedaction& redact) override {
    rocksdb::WriteBatch batch;
    for (const auto& k : entries) {
      std::string value;
      const rocksdb::Status s = db_->Get({}, handles_[kEntries], embedded::entry_key(k.user, k.seq), &value);
      counters_.reads++;
      if (s.IsNotFound()) continue;
      QIM_RETURN_IF_ERROR(rocks_status(s, "read entry of " + k.user.str()));
      QIM_ASSIGN_OR_RETURN(int64_t expires, embedded::entry_expiry(value));
      QIM_ASSIGN_OR_RETURN(Message message, embedded::entry_message(value));
      std::optional<std::string> body = redact(message.client_msg_id, message.body);
      if (!body) continue;
      message.body = *std::move(body);
      counters_.updates++;
      QIM_RETURN_IF_ERROR(rocks_status(batch.Put(handles_[kEntries], embedded::entry_key(k.user, k.seq),
                                                 embedded::entry_value(message, expires)),
                                       "batch redacted edit entry"));
    }
    if (batch.Count() == 0) return {};
    return rocks_status(gated([&] { return db_->Write(write_, &batch); }), "write redacted edit entries");
  }

  Result<std::optional<MailboxSeq>> read_frontier(ShardId shard) override {
    counters_.reads++;
    std::shared_lock lock(frontier_mu_[stripe_of(shard)]);  // not while a frontier write is unsynced
    QIM_RETURN_IF_ERROR(syncer_->failure());
    // The highest epoch's row is the last key of the shard's prefix.
    const std::string prefix = embedded::frontier_prefix(shard);
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator({}, handles_[kFrontier]));
    it->SeekForPrev(embedded::frontier_key(shard, Epoch{UINT32_MAX}));
    QIM_RETURN_IF_ERROR(rocks_status(it->status(), "read frontier"));
    if (!it->Valid() || !starts_with(it->key(), prefix)) return std::optional<MailboxSeq>();
    QIM_ASSIGN_OR_RETURN(MailboxSeq frontier, embedded::decode_frontier(view(it->key()), view(it->value())));
    return std::optional(frontier);
  }

  Result<std::vector<MailboxSeq>> read_frontiers(ShardId shard) override {
    counters_.reads++;
    std::shared_lock lock(frontier_mu_[stripe_of(shard)]);  // as read_frontier
    QIM_RETURN_IF_ERROR(syncer_->failure());
    // The shard's rows are the keys of its prefix, in ascending epoch order (big-endian epoch).
    const std::string prefix = embedded::frontier_prefix(shard);
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator({}, handles_[kFrontier]));
    std::vector<MailboxSeq> out;
    for (it->Seek(prefix); it->Valid() && starts_with(it->key(), prefix); it->Next()) {
      QIM_ASSIGN_OR_RETURN(MailboxSeq frontier,
                           embedded::decode_frontier(view(it->key()), view(it->value())));
      out.push_back(frontier);
    }
    QIM_RETURN_IF_ERROR(rocks_status(it->status(), "read frontiers"));
    return out;
  }

  // A blind max-merge, like a CQL cell written USING TIMESTAMP offset: a lower write never moves the
  // row back. expected_previous is not checked here: ContractStore checks the chain against its cached
  // frontier and RocksDB's directory lock guarantees no other writer.
  //
  // The merge goes in unsynced and the log is synced after it by the WalSyncer (wal_sync.h: a synced
  // RocksDB write would hold every other shard's writes in RocksDB's queue for its fsync). Until that
  // sync returns, the write holds the stripe's frontier lock, so no reader sees a frontier a power loss
  // could take back; readers of other stripes, and entry and claim writes, go on meanwhile.
  Status write_frontier(ShardId shard, Epoch epoch, MailboxSeq, MailboxSeq next) override {
    counters_.updates++;
    std::unique_lock lock(frontier_mu_[stripe_of(shard)]);
    QIM_RETURN_IF_ERROR(rocks_status(gated([&] {
                                       return db_->Merge(write_, handles_[kFrontier],
                                                         embedded::frontier_key(shard, epoch),
                                                         embedded::u64_value(next.offset().value));
                                     }),
                                     "write frontier"));
    return syncer_->sync_published();
  }

  Result<std::vector<MailboxEntry>> read_entries(const UserId& user, MailboxSeq after, MailboxSeq upto,
                                                 uint32_t limit) override {
    counters_.reads++;
    std::vector<MailboxEntry> out;
    if (after >= upto) return out;
    const std::string prefix = embedded::user_prefix(user);
    const int64_t now = context_.clock->now_ms();
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator({}, handles_[kEntries]));
    for (it->Seek(embedded::entry_key(user, MailboxSeq::from_raw(after.raw() + 1)));
         it->Valid() && starts_with(it->key(), prefix) && out.size() < limit; it->Next()) {
      QIM_ASSIGN_OR_RETURN(MailboxSeq seq, embedded::entry_seq(view(it->key()), prefix.size()));
      if (seq > upto) break;
      QIM_ASSIGN_OR_RETURN(int64_t expires, embedded::entry_expiry(view(it->value())));
      if (expires <= now) continue;  // gone by TTL; the compaction filter reclaims it later
      QIM_ASSIGN_OR_RETURN(Message message, embedded::entry_message(view(it->value())));
      out.push_back(MailboxEntry{user, seq, std::move(message)});
    }
    QIM_RETURN_IF_ERROR(rocks_status(it->status(), "read entries of " + user.str()));
    return out;
  }

  Result<RetentionLedger> read_ledger(const UserId& user) override {
    counters_.reads++;
    return get_ledger(user);
  }

  Result<std::optional<MailboxSeq>> read_bucket_proof(const UserId& user, DayBucket bucket) override {
    counters_.reads++;
    const std::string prefix = embedded::proof_prefix(user, bucket);
    std::optional<MailboxSeq> best;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator({}, handles_[kProofs]));
    for (it->Seek(prefix); it->Valid() && starts_with(it->key(), prefix); it->Next()) {  // one row per epoch
      QIM_ASSIGN_OR_RETURN(uint64_t seq, embedded::decode_u64_value(view(it->value()), "bucket proof"));
      best = std::max(best.value_or(MailboxSeq{}), MailboxSeq::from_raw(seq));
    }
    QIM_RETURN_IF_ERROR(rocks_status(it->status(), "read bucket proof of " + user.str()));
    return best;
  }

  Status commit_sweep(const UserId& user, const RetentionLedger& seen, MailboxSeq new_trim,
                      std::span<const DayBucket> expired) override {
    counters_.lwts++;
    LedgerStripe& stripe = ledger_of(user.str());
    std::lock_guard lock(stripe.mu);
    QIM_ASSIGN_OR_RETURN(RetentionLedger ledger, get_ledger(user));
    if (ledger.trim != seen.trim || ledger.live_buckets != seen.live_buckets) {
      return Error(Errc::kInvariant, "retention ledger of " + user.str() + " changed during the sweep");
    }
    ledger.trim = std::max(ledger.trim, new_trim);
    std::erase_if(ledger.live_buckets,
                  [&](DayBucket b) { return std::find(expired.begin(), expired.end(), b) != expired.end(); });
    QIM_RETURN_IF_ERROR(rocks_status(gated([&] {
                                       return db_->Put(sweep_write_, handles_[kLedger],
                                                       embedded::ledger_key(user),
                                                       embedded::ledger_value(ledger));
                                     }),
                                     "write retention ledger of " + user.str()));
    for (DayBucket b : expired) stripe.registered.erase({user.str(), b.value});
    return {};
  }

  Result<std::vector<UserId>> list_ledger_users(ShardId shard, const std::string& after,
                                                uint32_t limit) override {
    counters_.reads++;
    const std::string prefix = embedded::ledger_users_prefix(shard);
    const std::string from = embedded::ledger_user_key(shard, after);
    std::vector<UserId> out;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator({}, handles_[kLedgerUsers]));
    for (it->Seek(from); it->Valid() && starts_with(it->key(), prefix) && out.size() < limit; it->Next()) {
      if (view(it->key()) == from) continue;  // strictly after the cursor
      out.push_back(UserId::unchecked(std::string(view(it->key()).substr(prefix.size()))));
    }
    QIM_RETURN_IF_ERROR(
        rocks_status(it->status(), "list ledger users of shard " + std::to_string(shard.value)));
    return out;
  }

  // Removes identity rows past their 31-day expiry (reads already treat them as absent).
  Result<uint64_t> gc_completed_dispatches() override {
    // Scan without the identity lock so claims go on meanwhile; then, under it, delete only the rows
    // still expired, since a claim may have replaced an expired identity after the scan saw it.
    counters_.reads++;
    const int64_t now = context_.clock->now_ms();
    std::vector<std::string> candidates;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator({}, handles_[kIdentity]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      QIM_ASSIGN_OR_RETURN(int64_t expires, embedded::identity_expiry(view(it->value())));
      if (expires <= now) candidates.emplace_back(view(it->key()));
    }
    QIM_RETURN_IF_ERROR(rocks_status(it->status(), "scan identities"));
    if (candidates.empty()) return uint64_t{0};
    std::vector<std::unique_lock<std::mutex>> locks;  // every stripe, in order: this is rare
    for (uint32_t i = 0; i < stripe_count_; ++i) locks.emplace_back(identity_mu_[i]);
    rocksdb::WriteBatch batch;
    uint64_t removed = 0;
    for (const auto& key : candidates) {
      std::string value;
      const rocksdb::Status s = db_->Get({}, handles_[kIdentity], key, &value);
      if (s.IsNotFound()) continue;
      QIM_RETURN_IF_ERROR(rocks_status(s, "re-read identity"));
      QIM_ASSIGN_OR_RETURN(int64_t expires, embedded::identity_expiry(value));
      if (expires > now) continue;
      QIM_RETURN_IF_ERROR(rocks_status(batch.Delete(handles_[kIdentity], key), "batch identity delete"));
      ++removed;
    }
    if (removed > 0)
      QIM_RETURN_IF_ERROR(
          rocks_status(gated([&] { return db_->Write(write_, &batch); }), "delete identities"));
    return removed;
  }

  OpCounters& counters() override { return counters_; }

  Status attach(embedded::SideRows& side) {
    embedded::SideRows* none = nullptr;
    if (!side_.compare_exchange_strong(none, &side)) {
      return Error(Errc::kInvalidArgument,
                   "embedded store " + dir_ + ": rows of another store already attached");
    }
    if (Status s = side.attach(side_db()); !s.ok()) {
      side_.store(nullptr);
      return s;
    }
    return {};
  }

  Status drop_proof(const UserId& user, DayBucket bucket) {
    const std::string prefix = embedded::proof_prefix(user, bucket);
    rocksdb::WriteBatch batch;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator({}, handles_[kProofs]));
    for (it->Seek(prefix); it->Valid() && starts_with(it->key(), prefix); it->Next()) {
      QIM_RETURN_IF_ERROR(rocks_status(batch.Delete(handles_[kProofs], it->key()), "batch proof delete"));
    }
    QIM_RETURN_IF_ERROR(rocks_status(it->status(), "scan proofs"));
    return rocks_status(gated([&] { return db_->Write(write_, &batch); }), "delete proofs");
  }

 private:
  embedded::SideDb side_db() {
    return embedded::SideDb{db_.get(), side_handles_, gate_.get(), syncer_.get()};
  }

  // A write, unless the database is stopped by a write error and cannot be resumed yet (a full disk): then
  // that error, the write not attempted.
  template <typename Write>
  rocksdb::Status gated(Write&& write) {
    if (rocksdb::Status ready = gate_->ready(); !ready.ok()) return ready;
    return write();
  }

  // The identity at `key` unless it is missing or past its expiry (an expired identity is absent).
  Result<std::optional<StoredIdentity>> live_identity(const std::string& key, const DispatchId& id) {
    counters_.reads++;
    std::string value;
    const rocksdb::Status s = db_->Get({}, handles_[kIdentity], key, &value);
    if (s.IsNotFound()) return std::optional<StoredIdentity>();
    QIM_RETURN_IF_ERROR(rocks_status(s, "read identity " + id.str()));
    QIM_ASSIGN_OR_RETURN(embedded::IdentityRow row, embedded::decode_identity(id, value));
    if (row.expires_ms <= context_.clock->now_ms()) return std::optional<StoredIdentity>();
    return std::optional(std::move(row.stored));
  }

  Result<RetentionLedger> get_ledger(const UserId& user) {
    std::string value;
    const rocksdb::Status s = db_->Get({}, handles_[kLedger], embedded::ledger_key(user), &value);
    if (s.IsNotFound()) return RetentionLedger{};
    QIM_RETURN_IF_ERROR(rocks_status(s, "read retention ledger of " + user.str()));
    return embedded::decode_ledger(value);
  }

  struct LedgerStripe {
    std::mutex mu;
    std::set<std::pair<std::string, int64_t>> registered;  // guarded by mu
  };

  uint32_t stripe_of(ShardId shard) const { return shard.value % stripe_count_; }
  std::mutex& identity_mu(ShardId shard) { return identity_mu_[stripe_of(shard)]; }
  LedgerStripe& ledger_of(const std::string& user) {
    return ledgers_[stripe_of(context_.shards.shard_of(UserId::unchecked(user)))];
  }

  // Adds to `batch` the ledger rows that gain a bucket; caller holds the buckets' users' stripes.
  Status register_buckets(const std::set<std::pair<std::string, int64_t>>& buckets,
                          rocksdb::WriteBatch& batch) {
    std::map<std::string, RetentionLedger> changed;
    for (const auto& [user_str, day] : buckets) {
      LedgerStripe& stripe = ledger_of(user_str);
      if (stripe.registered.size() > kRegisteredCacheMax / stripe_count_) stripe.registered.clear();
      if (stripe.registered.contains({user_str, day})) continue;
      const UserId user = UserId::unchecked(user_str);
      auto slot = changed.find(user_str);
      if (slot == changed.end()) {
        counters_.reads++;  // a cache miss: one ledger read for this user
        QIM_ASSIGN_OR_RETURN(RetentionLedger ledger, get_ledger(user));
        slot = changed.emplace(user_str, std::move(ledger)).first;
      }
      auto& live = slot->second.live_buckets;
      const DayBucket b{day};
      if (std::binary_search(live.begin(), live.end(), b)) continue;
      counters_.updates++;
      live.insert(std::upper_bound(live.begin(), live.end(), b), b);
    }
    for (const auto& [user_str, ledger] : changed) {
      const UserId user = UserId::unchecked(user_str);
      QIM_RETURN_IF_ERROR(rocks_status(
          batch.Put(handles_[kLedger], embedded::ledger_key(user), embedded::ledger_value(ledger)),
          "batch ledger"));
      // Listed for the shard owner's sweep, on the same cache miss as the ledger row (an idempotent put).
      counters_.inserts++;
      QIM_RETURN_IF_ERROR(rocks_status(
          batch.Put(handles_[kLedgerUsers],
                    embedded::ledger_user_key(context_.shards.shard_of(user), user_str), rocksdb::Slice()),
          "batch ledger user"));
    }
    return {};
  }

  BackendContext context_;
  std::string dir_;
  rocksdb::Env* env_;  // null: RocksDB's default
  // The merge operator and filter are used by RocksDB until the database is closed (destructor body).
  std::shared_ptr<rocksdb::MergeOperator> max_merge_;
  std::shared_ptr<const rocksdb::SliceTransform> same_key_hint_;  // frontier and proof rows
  std::shared_ptr<const rocksdb::SliceTransform> user_hint_;      // entries: the key without its seq
  embedded::EntryExpiryFilter expiry_filter_;
  std::shared_ptr<rocksdb::MergeOperator> side_merge_;  // the inbox's families (side_rows.h)
  embedded::RefExpiryFilter side_filter_;
  rocksdb::WriteOptions write_;        // WAL on, not synced: made durable by the next frontier's sync
  rocksdb::WriteOptions sweep_write_;  // WAL on, synced
  std::unique_ptr<rocksdb::DB> db_;
  std::array<rocksdb::ColumnFamilyHandle*, kFamilyCount> handles_{};  // in the order of Family
  std::array<rocksdb::ColumnFamilyHandle*, embedded::kSideFamilyCount> side_handles_{};
  std::atomic<embedded::SideRows*> side_{nullptr};  // set once by attach, before the store writes
  OpCounters counters_;
  // One stripe per shard up to kMaxStripes, so the cache's bound over all stripes stays the same.
  const uint32_t stripe_count_ = std::min(context_.shards.shard_count(), kMaxStripes);
  std::array<std::mutex, kMaxStripes> identity_mu_;
  std::array<LedgerStripe, kMaxStripes> ledgers_;
  // Held shared by frontier reads, exclusively by a frontier write until its sync returned.
  std::array<std::shared_mutex, kMaxStripes> frontier_mu_;
  std::shared_ptr<embedded::RocksWriteGate> gate_ = std::make_shared<embedded::RocksWriteGate>();
  std::unique_ptr<embedded::WalSyncer> syncer_;  // over db_, from open() on
};

}  // namespace

Result<std::unique_ptr<StoreBackend>> open_embedded_backend(const BackendContext& context,
                                                            const std::string& dir) {
  return open_embedded_backend_on(context, dir, nullptr);
}

Result<std::unique_ptr<StoreBackend>> open_embedded_backend_on(const BackendContext& context,
                                                               const std::string& dir, rocksdb::Env* env) {
  if (dir.empty()) return Error(Errc::kConfig, "embedded store: empty data directory");
  auto backend = std::make_unique<EmbeddedBackend>(context, dir, env);
  QIM_RETURN_IF_ERROR(backend->open());
  return std::unique_ptr<StoreBackend>(std::move(backend));
}

Status embedded_backend_attach(StoreBackend& backend, embedded::SideRows& side) {
  auto* embedded = dynamic_cast<EmbeddedBackend*>(&backend);
  if (embedded == nullptr) return Error(Errc::kInvalidArgument, "not an embedded backend");
  return embedded->attach(side);
}

Status embedded_backend_drop_proof(StoreBackend& backend, const UserId& user, DayBucket bucket) {
  auto* embedded = dynamic_cast<EmbeddedBackend*>(&backend);
  if (embedded == nullptr) return Error(Errc::kInvalidArgument, "not an embedded backend");
  return embedded->drop_proof(user, bucket);
}

}  // namespace qim
