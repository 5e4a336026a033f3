// The embedded backend's frontier write is synced after it goes in, outside RocksDB's write queue
// (decision 45, mailbox/embedded/wal_sync.h). Through a file system whose write-ahead-log syncs the test
// can hold or fail: no reader sees a frontier before its sync returned; another shard's frontier reads
// and entry writes go on while one sync is held (with a synced RocksDB write they queued behind it);
// frontier writes that wait together share one sync; a failed sync fails the write and every frontier
// read after it, and a reopened store reads on.
#include <gtest/gtest.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "mailbox/embedded/embedded_backend.h"
#include "mailbox/tests/contract_helpers.h"

namespace qim::test {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kStartMs = 20'000 * kDayMs;
constexpr Epoch kEpoch{1};
constexpr uint32_t kShards = 8;

// Counts the syncs of write-ahead-log files (*.log) and can hold them (until released) or fail them.
class WalSyncGate : public rocksdb::FileSystemWrapper {
 public:
  WalSyncGate() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}
  const char* Name() const override { return "WalSyncGate"; }

  rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* file,
                                    rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = target()->NewWritableFile(name, options, file, dbg);
    if (s.ok() && name.ends_with(".log")) *file = std::make_unique<WalFile>(std::move(*file), *this);
    return s;
  }

  void hold() {
    std::lock_guard lock(mu_);
    holding_ = true;
  }
  void release() {
    std::lock_guard lock(mu_);
    holding_ = false;
    cv_.notify_all();
  }
  void fail_syncs() {
    std::lock_guard lock(mu_);
    failing_ = true;
  }
  // Blocks until a sync is being held.
  void await_held() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return held_ > 0; });
  }
  int syncs() {
    std::lock_guard lock(mu_);
    return syncs_;
  }
  // Operations (a frontier write is one merge) appended to the log so far.
  int appends() {
    std::lock_guard lock(mu_);
    return appends_;
  }
  // Blocks until `n` operations have been appended in all, or `limit` passed.
  void await_appends(int n, std::chrono::milliseconds limit) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, limit, [&] { return appends_ >= n; });
  }

 private:
  class WalFile : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    WalFile(std::unique_ptr<rocksdb::FSWritableFile> file, WalSyncGate& gate)
        : FSWritableFileOwnerWrapper(std::move(file)), gate_(gate) {}
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override {
      gate_.appended(data);
      return target()->Append(data, options, dbg);
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             const rocksdb::DataVerificationInfo& info,
                             rocksdb::IODebugContext* dbg) override {
      gate_.appended(data);
      return target()->Append(data, options, info, dbg);
    }
    rocksdb::IOStatus Sync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
      if (rocksdb::IOStatus s = gate_.enter(); !s.ok()) return s;
      return target()->Sync(options, dbg);
    }
    rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
      if (rocksdb::IOStatus s = gate_.enter(); !s.ok()) return s;
      return target()->Fsync(options, dbg);
    }

   private:
    WalSyncGate& gate_;
  };

  // A small write is one log record per append: a 7-byte record header, then the write batch, whose
  // 12-byte header ends with its count of operations (little-endian). Writes RocksDB groups share a record,
  // so the counts, not the appends, say how many writes reached the log.
  void appended(const rocksdb::Slice& data) {
    constexpr size_t kCountAt = 7 + 8;
    if (data.size() < kCountAt + 4) return;
    uint32_t count = 0;
    for (size_t i = 0; i < 4; ++i) count |= uint32_t{static_cast<uint8_t>(data[kCountAt + i])} << (8 * i);
    std::lock_guard lock(mu_);
    appends_ += static_cast<int>(count);
    cv_.notify_all();
  }

  rocksdb::IOStatus enter() {
    std::unique_lock lock(mu_);
    ++syncs_;
    if (failing_) return rocksdb::IOStatus::IOError("injected sync failure");
    ++held_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return !holding_; });
    --held_;
    return rocksdb::IOStatus::OK();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool holding_ = false;
  bool failing_ = false;
  int held_ = 0;
  int syncs_ = 0;
  int appends_ = 0;
};

class EmbeddedFrontierSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "qim-frontier-sync-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    context_.shards = *ShardMap::create(kShards);
    context_.clock = std::make_shared<ManualClock>(kStartMs);
    gate_ = std::make_shared<WalSyncGate>();
    env_ = rocksdb::NewCompositeEnv(gate_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::unique_ptr<StoreBackend> open(rocksdb::Env* env) {
    auto backend = open_embedded_backend_on(context_, root_ + "/mailbox", env);
    EXPECT_TRUE(is_ok(backend));
    return backend.ok() ? std::move(backend).value() : nullptr;
  }
  static uint64_t frontier(StoreBackend& b, uint32_t shard) {
    auto f = b.read_frontier(ShardId{shard});
    EXPECT_TRUE(is_ok(f));
    return f.ok() && f->has_value() ? (*f)->offset().value : 0;
  }

  std::string root_;
  BackendContext context_;
  std::shared_ptr<WalSyncGate> gate_;
  std::unique_ptr<rocksdb::Env> env_;
};

TEST_F(EmbeddedFrontierSyncTest, AFrontierIsReadOnlyAfterItsSyncAndOtherShardsGoOnMeanwhile) {
  auto b = open(env_.get());
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(is_ok(b->write_frontier(ShardId{0}, kEpoch, MailboxSeq{}, seq_of(1, 10))));
  ASSERT_TRUE(is_ok(b->write_frontier(ShardId{1}, kEpoch, MailboxSeq{}, seq_of(1, 20))));

  gate_->hold();
  auto writer = std::async(std::launch::async, [&] {
    return b->write_frontier(ShardId{0}, kEpoch, seq_of(1, 10), seq_of(1, 11));
  });
  gate_->await_held();
  auto reader = std::async(std::launch::async, [&] { return frontier(*b, 0); });
  // Shard 1 is another stripe: its frontier reads and its entry writes do not wait for shard 0's sync
  // (a synced RocksDB write would hold the entry write in RocksDB's queue until the sync returned).
  EXPECT_EQ(frontier(*b, 1), 20u);
  const UserId user = user_in_shard(context_.shards, ShardId{1}, 0);
  const std::vector<MailboxEntry> entries = {{user, seq_of(1, 21), make_message(21, user, kStartMs)}};
  auto entry_write =
      std::async(std::launch::async, [&] { return b->write_entries(ShardId{1}, kEpoch, entries); });
  if (entry_write.wait_for(10s) != std::future_status::ready) {
    ADD_FAILURE() << "an entry write waited for another shard's sync";
    gate_->release();  // so the futures' destructors do not wait forever
    return;
  }
  EXPECT_TRUE(is_ok(entry_write.get()));
  // The reader of shard 0 waits for the sync: the write is in RocksDB but not yet durable.
  EXPECT_EQ(reader.wait_for(300ms), std::future_status::timeout) << "read a frontier before its sync";
  EXPECT_EQ(writer.wait_for(0ms), std::future_status::timeout);

  gate_->release();
  EXPECT_TRUE(is_ok(writer.get()));
  EXPECT_EQ(reader.get(), 11u);
  auto read = b->read_entries(user, MailboxSeq{}, seq_of(1, 100), 10);
  ASSERT_TRUE(is_ok(read));
  EXPECT_EQ(read->size(), 1u);
}

TEST_F(EmbeddedFrontierSyncTest, FrontierWritesWaitingTogetherShareASync) {
  auto b = open(env_.get());
  ASSERT_NE(b, nullptr);
  gate_->hold();
  auto first = std::async(std::launch::async,
                          [&] { return b->write_frontier(ShardId{0}, kEpoch, MailboxSeq{}, seq_of(1, 5)); });
  gate_->await_held();
  const int before = gate_->syncs();
  const int appended = gate_->appends();
  std::vector<std::future<Status>> others;
  for (uint32_t s = 1; s < kShards; ++s) {
    others.push_back(std::async(std::launch::async, [&, s] {
      return b->write_frontier(ShardId{s}, kEpoch, MailboxSeq{}, seq_of(1, 100 + s));
    }));
  }
  // Each of them has merged its row (one operation each in the log) and waits for the sync after the
  // held one (none returns before it); the pause lets the last to append reach the syncer.
  gate_->await_appends(appended + static_cast<int>(kShards) - 1, 5s);
  std::this_thread::sleep_for(300ms);
  for (auto& f : others) EXPECT_EQ(f.wait_for(0ms), std::future_status::timeout);
  gate_->release();
  EXPECT_TRUE(is_ok(first.get()));
  for (auto& f : others) EXPECT_TRUE(is_ok(f.get()));
  EXPECT_LE(gate_->syncs() - before, 2)
      << "seven frontier writes waiting together, one sync after the held one";
  for (uint32_t s = 1; s < kShards; ++s) EXPECT_EQ(frontier(*b, s), 100u + s);
}

TEST_F(EmbeddedFrontierSyncTest, AFailedSyncFailsTheWriteAndEveryFrontierReadUntilReopened) {
  {
    auto b = open(env_.get());
    ASSERT_NE(b, nullptr);
    ASSERT_TRUE(is_ok(b->write_frontier(ShardId{2}, kEpoch, MailboxSeq{}, seq_of(1, 7))));
    gate_->fail_syncs();
    const Status failed = b->write_frontier(ShardId{2}, kEpoch, seq_of(1, 7), seq_of(1, 8));
    ASSERT_TRUE(fails_with(failed, Errc::kIo));
    EXPECT_NE(failed.error().message().find("sync the write-ahead log"), std::string::npos)
        << failed.error().message();
    // The row of the failed write may be in RocksDB; nobody reads it as the frontier.
    EXPECT_TRUE(fails_with(b->read_frontier(ShardId{2}), Errc::kIo));
    EXPECT_TRUE(fails_with(b->read_frontiers(ShardId{3}), Errc::kIo));
    EXPECT_TRUE(fails_with(b->write_frontier(ShardId{3}, kEpoch, MailboxSeq{}, seq_of(1, 1)), Errc::kIo));
  }
  // Reopened (RocksDB replays its log), the store reads and writes again; the frontier is the synced
  // one or, as the process did not lose its page cache, the failed write's: never below 7.
  auto reopened = open(nullptr);
  ASSERT_NE(reopened, nullptr);
  EXPECT_GE(frontier(*reopened, 2), 7u);
  EXPECT_TRUE(is_ok(reopened->write_frontier(ShardId{2}, kEpoch, seq_of(1, 8), seq_of(1, 9))));
  EXPECT_EQ(frontier(*reopened, 2), 9u);
}

}  // namespace
}  // namespace qim::test
