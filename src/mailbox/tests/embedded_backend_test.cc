// What the embedded backend promises beyond the contract suite: data survives a restart and a crash
// image, malformed rows read as CorruptEntry, monotonic rows never move back, one process per
// directory, and the operations it counts.
#include "mailbox/embedded/embedded_backend.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "mailbox/embedded/expiry_filter.h"
#include "mailbox/embedded/max_merge.h"
#include "mailbox/embedded/rows.h"
#include "mailbox/memory/memory_backend.h"
#include "mailbox/store_options.h"
#include "mailbox/tests/contract_helpers.h"

namespace qim::test {
namespace {

constexpr int64_t kStartMs = 20'000 * kDayMs;
constexpr Epoch kEpoch{1};

class EmbeddedBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "qim-embedded-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    clock_ = std::make_shared<ManualClock>(kStartMs);
    options_.backend = "embedded";
    options_.data_dir = root_ + "/mailbox";
    options_.shard_count = 4;
    options_.clock = clock_;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::unique_ptr<MailboxStore> open(const std::string& dir) {
    StoreOptions o = options_;
    o.data_dir = dir;
    auto store = open_mailbox_store(o);
    EXPECT_TRUE(is_ok(store));
    return store.ok() ? std::move(store).value() : nullptr;
  }
  BackendContext context() const {
    BackendContext c;
    c.shards = *ShardMap::create(options_.shard_count);
    c.clock = clock_;
    return c;
  }
  UserId user(uint32_t shard, int n) const { return user_in_shard(context().shards, ShardId{shard}, n); }

  // Rewrites one raw row of a column family while no backend has the directory open.
  void put_raw(std::string_view family, const std::string& key, const std::string& value,
               bool merge = false) {
    std::vector<std::string> names;
    ASSERT_TRUE(rocksdb::DB::ListColumnFamilies({}, options_.data_dir, &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const auto& n : names) {
      rocksdb::ColumnFamilyOptions cf;
      cf.merge_operator = std::make_shared<embedded::MaxU64Merge>();
      families.emplace_back(n, cf);
    }
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open({}, options_.data_dir, families, &handles, &db).ok());
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] != family) continue;
      auto s = merge ? db->Merge({}, handles[i], key, value) : db->Put({}, handles[i], key, value);
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
    for (auto* h : handles) ASSERT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
    delete db;
  }

  std::string root_;
  std::shared_ptr<ManualClock> clock_;
  StoreOptions options_;
};

TEST_F(EmbeddedBackendTest, DeclaresPageLimit64ThroughTheFactory) {
  auto store = open(options_.data_dir);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->backend_name(), "embedded");
  EXPECT_EQ(store->finish_page_limit(), 64u);
}

// Writes through the factory in several shards, closes everything, opens again: nothing is lost.
TEST_F(EmbeddedBackendTest, RestartLosesNothing) {
  std::vector<DispatchRecord> records;
  {
    auto store = open(options_.data_dir);
    ASSERT_NE(store, nullptr);
    for (uint32_t shard = 0; shard < 4; ++shard) {
      MailboxSeq previous;
      for (int i = 0; i < 20; ++i) {
        const UserId a = user(shard, i % 3), b = user(shard, 3 + i % 2);
        records.push_back(make_record("s" + std::to_string(shard) + "-" + std::to_string(i),
                                      make_message(shard * 100 + i, a, clock_->now_ms()), {{a, b}}));
        ASSERT_TRUE(is_ok(
            materialise(*store, ShardId{shard}, kEpoch, records.back(), Offset{uint64_t(10 + i)}, previous)));
        previous = seq_of(1, 10 + i);
      }
    }
    clock_->advance_ms(31 * kDayMs + 1);
    ASSERT_TRUE(is_ok(store->sweep_retention(user(0, 0))));
  }
  auto store = open(options_.data_dir);
  ASSERT_NE(store, nullptr);
  for (uint32_t shard = 0; shard < 4; ++shard) {
    auto frontier = frontier_of(*store, ShardId{shard}, kEpoch);
    ASSERT_TRUE(is_ok(frontier));
    EXPECT_EQ(*frontier, seq_of(1, 29));
  }
  auto page = store->read_mailbox(MailboxQuery{user(0, 0), MailboxSeq{}, 100});
  ASSERT_TRUE(is_ok(page));
  EXPECT_EQ(page->trim, seq_of(1, 28)) << "the sweep's trim survived";
  EXPECT_TRUE(
      fails_with(store->read_mailbox(MailboxQuery{user(0, 0), seq_of(1, 10), 10}), Errc::kExpiredCursor));
  clock_->set_ms(kStartMs);  // back before the TTL: every entry is readable
  auto entries = read_all(*store, user(2, 3));
  ASSERT_TRUE(is_ok(entries));
  ASSERT_EQ(entries->size(), 10u);
  EXPECT_EQ(entries->front().message, records[40].message);
  auto again = store->begin_dispatch(ShardId{3}, kEpoch, records[61].identity, Offset{99});
  ASSERT_TRUE(is_ok(again));
  EXPECT_EQ(again->canonical_offset, Offset{11});
  EXPECT_FALSE(again->needs_entries);
}

// A copy of the directory taken while the database is open is what a crash leaves on disk.
TEST_F(EmbeddedBackendTest, CrashImageRecoversEverythingWritten) {
  const std::string image = root_ + "/crash-image";
  const UserId a = user(0, 0), b = user(0, 1);
  const auto finished = make_record("finished", make_message(1, a, kStartMs), {{a, b}});
  const auto pending = make_record("pending", make_message(2, a, kStartMs), {{a, b}});
  {
    auto store = open(options_.data_dir);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(is_ok(materialise(*store, ShardId{0}, kEpoch, finished, Offset{5}, MailboxSeq{})));
    ASSERT_TRUE(is_ok(store->begin_dispatch(ShardId{0}, kEpoch, pending.identity, Offset{6})));
    ASSERT_TRUE(is_ok(store->write_chunks(ShardId{0}, kEpoch, chunk_writes(pending))));
    std::filesystem::copy(options_.data_dir, image, std::filesystem::copy_options::recursive);
    std::filesystem::remove(image + "/LOCK");  // held by the live process; a crashed one holds nothing
  }
  auto store = open(image);
  ASSERT_NE(store, nullptr);
  auto frontier = frontier_of(*store, ShardId{0}, kEpoch);
  ASSERT_TRUE(is_ok(frontier));
  EXPECT_EQ(*frontier, seq_of(1, 5));
  auto entries = read_all(*store, b);
  ASSERT_TRUE(is_ok(entries));
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ(entries->front().message, finished.message);
  auto replay = store->begin_dispatch(ShardId{0}, kEpoch, pending.identity, Offset{6});
  ASSERT_TRUE(is_ok(replay));
  EXPECT_EQ(replay->kind, BeginKind::kExisting);
  EXPECT_TRUE(replay->needs_entries);
  ASSERT_TRUE(is_ok(store->write_chunks(ShardId{0}, kEpoch, chunk_writes(pending))));
  ASSERT_TRUE(is_ok(store->finish_dispatch(ShardId{0}, kEpoch, pending.identity.id,
                                           uniform_advances(seq_of(1, 5), seq_of(1, 6)))));
  entries = read_all(*store, b);
  ASSERT_TRUE(is_ok(entries));
  EXPECT_EQ(entries->size(), 2u);
}

TEST_F(EmbeddedBackendTest, SecondOpenOfADirectoryIsRefused) {
  auto first = open_embedded_backend(context(), options_.data_dir);
  ASSERT_TRUE(is_ok(first));
  auto second = open_embedded_backend(context(), options_.data_dir);
  EXPECT_TRUE(fails_with(second, Errc::kIo));
  EXPECT_NE(second.error().message().find(options_.data_dir), std::string::npos) << second.error().message();
}

TEST_F(EmbeddedBackendTest, UnusableDirectoryIsAnIoError) {
  const std::string file = root_ + "/a-file";
  { std::ofstream(file) << "x"; }
  EXPECT_TRUE(fails_with(open_embedded_backend(context(), file + "/mailbox"), Errc::kIo));
  EXPECT_TRUE(fails_with(open_embedded_backend(context(), ""), Errc::kConfig));
}

TEST_F(EmbeddedBackendTest, FrontierNeverMovesBack) {
  auto backend = open_embedded_backend(context(), options_.data_dir);
  ASSERT_TRUE(is_ok(backend));
  StoreBackend& b = **backend;
  ASSERT_TRUE(is_ok(b.write_frontier(ShardId{1}, kEpoch, MailboxSeq{}, seq_of(1, 90))));
  ASSERT_TRUE(is_ok(b.write_frontier(ShardId{1}, kEpoch, MailboxSeq{}, seq_of(1, 40))));  // a late write
  ASSERT_TRUE(is_ok(b.write_frontier(ShardId{1}, Epoch{0}, MailboxSeq{}, seq_of(0, 500))));
  auto frontier = b.read_frontier(ShardId{1});
  ASSERT_TRUE(is_ok(frontier));
  EXPECT_EQ(*frontier, seq_of(1, 90)) << "the highest epoch's row, at its highest offset";
  auto none = b.read_frontier(ShardId{2});
  ASSERT_TRUE(is_ok(none));
  EXPECT_FALSE(none->has_value());
}

// A page's rows are put in key order and a user's proofs of one day as one merge of their highest seq
// (write_entries): whatever the order the page lists them in, a fresh backend on the same directory reads
// every entry, in seq order, and as each user's proof of a day the highest seq of that day; and the
// counters say what was written: one row per entry, one per user and day.
TEST_F(EmbeddedBackendTest, PageRowsInAnyOrderReadBackWithOneProofPerUserAndDay) {
  const UserId a = user(2, 0), b = user(2, 1);
  const DayBucket day = day_bucket_of(kStartMs);
  std::vector<MailboxEntry> page;
  for (uint64_t offset : {7, 3, 9, 5})
    page.push_back({a, seq_of(1, offset), make_message(offset, b, kStartMs)});
  page.push_back({b, seq_of(1, 4), make_message(4, a, kStartMs)});
  page.push_back({a, seq_of(1, 8), make_message(8, b, kStartMs + kDayMs)});  // the next day's bucket
  {
    auto backend = open_embedded_backend(context(), options_.data_dir);
    ASSERT_TRUE(is_ok(backend));
    // The three buckets registered first, so the page below writes entries and proofs only.
    const std::vector<MailboxEntry> first = {{a, seq_of(1, 1), make_message(1, b, kStartMs)},
                                             {b, seq_of(1, 2), make_message(2, a, kStartMs)},
                                             {a, seq_of(1, 6), make_message(6, b, kStartMs + kDayMs)}};
    ASSERT_TRUE(is_ok((*backend)->write_entries(ShardId{2}, kEpoch, first)));
    const OpCounts before = (*backend)->counters().snapshot();
    ASSERT_TRUE(is_ok((*backend)->write_entries(ShardId{2}, kEpoch, page)));
    EXPECT_EQ(((*backend)->counters().snapshot() - before).inserts, 6u + 3u)
        << "6 entries; proofs for (a, day), (b, day), (a, next day)";
  }
  auto fresh = open_embedded_backend(context(), options_.data_dir);
  ASSERT_TRUE(is_ok(fresh));
  auto entries = (*fresh)->read_entries(a, MailboxSeq{}, seq_of(1, 1000), 100);
  ASSERT_TRUE(is_ok(entries));
  std::vector<uint64_t> offsets;
  for (const auto& e : *entries) {
    offsets.push_back(e.seq.offset().value);
    EXPECT_EQ(e.message.id.value, e.seq.offset().value) << "each entry keeps its own message";
  }
  EXPECT_EQ(offsets, (std::vector<uint64_t>{1, 3, 5, 6, 7, 8, 9}));
  auto proof_a = (*fresh)->read_bucket_proof(a, day);
  ASSERT_TRUE(is_ok(proof_a));
  EXPECT_EQ(*proof_a, std::optional(seq_of(1, 9)))
      << "the page's highest seq of a's day, listed before the last";
  auto proof_a_next = (*fresh)->read_bucket_proof(a, DayBucket{day.value + 1});
  ASSERT_TRUE(is_ok(proof_a_next));
  EXPECT_EQ(*proof_a_next, std::optional(seq_of(1, 8)));
  auto proof_b = (*fresh)->read_bucket_proof(b, day);
  ASSERT_TRUE(is_ok(proof_b));
  EXPECT_EQ(*proof_b, std::optional(seq_of(1, 4)));
}

TEST_F(EmbeddedBackendTest, BucketProofIsTheMaxOverEpochs) {
  auto backend = open_embedded_backend(context(), options_.data_dir);
  ASSERT_TRUE(is_ok(backend));
  const UserId u = user(0, 0);
  const Message m = make_message(1, u, kStartMs);
  const std::vector<MailboxEntry> e2 = {{u, seq_of(2, 7), m}}, e1 = {{u, seq_of(1, 900), m}};
  ASSERT_TRUE(is_ok((*backend)->write_entries(ShardId{0}, Epoch{2}, e2)));
  ASSERT_TRUE(is_ok((*backend)->write_entries(ShardId{0}, Epoch{1}, e1)));
  auto proof = (*backend)->read_bucket_proof(u, day_bucket_of(kStartMs));
  ASSERT_TRUE(is_ok(proof));
  EXPECT_EQ(*proof, seq_of(2, 7));
  auto ledger = (*backend)->read_ledger(u);
  ASSERT_TRUE(is_ok(ledger));
  EXPECT_EQ(ledger->live_buckets, std::vector{day_bucket_of(kStartMs)});
}

TEST_F(EmbeddedBackendTest, MalformedFrontierRowsAreCorrupt) {
  { ASSERT_TRUE(is_ok(open_embedded_backend(context(), options_.data_dir))); }
  put_raw(embedded::kFrontierFamily, embedded::frontier_key(ShardId{0}, kEpoch), "short");
  put_raw(embedded::kFrontierFamily, embedded::frontier_key(ShardId{1}, Epoch{70'000}),
          embedded::u64_value(1));
  put_raw(embedded::kFrontierFamily, embedded::frontier_key(ShardId{2}, kEpoch),
          embedded::u64_value(kMaxOffset + 1));
  put_raw(embedded::kFrontierFamily, embedded::frontier_key(ShardId{3}, kEpoch), embedded::u64_value(3));
  put_raw(embedded::kFrontierFamily, embedded::frontier_key(ShardId{3}, kEpoch), "bad operand", true);
  auto store = open(options_.data_dir);
  ASSERT_NE(store, nullptr);
  for (uint32_t shard = 0; shard < 4; ++shard) {
    EXPECT_TRUE(fails_with(store->lane_watermarks(ShardId{shard}, Epoch{kMaxEpoch}), Errc::kCorruptEntry))
        << "shard " << shard;
  }
}

TEST_F(EmbeddedBackendTest, MalformedEntryRowIsCorrupt) {
  const UserId u = user(0, 0);
  {
    auto store = open(options_.data_dir);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(
        is_ok(materialise(*store, ShardId{0}, kEpoch, make_record("d", make_message(1, u, kStartMs), {{u}}),
                          Offset{4}, MailboxSeq{})));
  }
  put_raw(embedded::kEntriesFamily, embedded::entry_key(u, seq_of(1, 4)),
          embedded::entry_value(make_message(1, u, kStartMs), kStartMs + kDayMs).substr(0, 20));
  auto store = open(options_.data_dir);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(fails_with(store->read_mailbox(MailboxQuery{u, MailboxSeq{}, 10}), Errc::kCorruptEntry));
}

TEST_F(EmbeddedBackendTest, ExpiryFilterDropsOnlyExpiredEntries) {
  const embedded::EntryExpiryFilter filter(clock_);
  const Message m = make_message(1, user(0, 0), kStartMs);
  std::string unused;
  bool changed = false;
  const std::string live = embedded::entry_value(m, kStartMs + 1);
  const std::string expired = embedded::entry_value(m, kStartMs);
  EXPECT_FALSE(filter.Filter(0, "k", live, &unused, &changed));
  EXPECT_TRUE(filter.Filter(0, "k", expired, &unused, &changed));
  EXPECT_FALSE(filter.Filter(0, "k", "short", &unused, &changed))
      << "a corrupt row is kept for the read to report";
  clock_->advance_ms(1);
  EXPECT_TRUE(filter.Filter(0, "k", live, &unused, &changed));
}

// Per one-to-one record, once each user's day is registered, the embedded backend issues what the
// memory reference does: identity 1 read + 1 insert, 2 entries and 2 proofs, 1 frontier update.
TEST_F(EmbeddedBackendTest, CountsOperationsLikeTheMemoryBackend) {
  auto count = [&](std::unique_ptr<StoreBackend> backend) {
    ContractStore store(std::move(backend), context(), std::nullopt);
    const UserId a = user(0, 0), b = user(0, 1);
    MailboxSeq previous;
    OpCounts warm;
    for (uint64_t i = 1; i <= 11; ++i) {
      if (i == 2) warm = store.op_counts();
      const auto r = make_record("d" + std::to_string(i), make_message(i, a, kStartMs), {{b, a}});
      EXPECT_TRUE(is_ok(materialise(store, ShardId{0}, kEpoch, r, Offset{i}, previous)));
      previous = seq_of(1, i);
    }
    return store.op_counts() - warm;
  };
  auto embedded = open_embedded_backend(context(), options_.data_dir);
  ASSERT_TRUE(is_ok(embedded));
  const OpCounts e = count(std::move(embedded).value());
  const OpCounts m = count(make_memory_backend(context()));
  EXPECT_EQ(e.to_string(), m.to_string());
  EXPECT_EQ(e.inserts, 10u * 5);
  EXPECT_EQ(e.updates, 10u * 1);
  EXPECT_EQ(e.reads, 10u * 1);
  EXPECT_EQ(e.lwts, 0u);
}

}  // namespace
}  // namespace qim::test
