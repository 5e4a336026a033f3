#include "log/embedded/embedded_log.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <latch>
#include <sstream>
#include <thread>

#include "log/embedded/segment.h"
#include "log/testing/temp_dir.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

class EmbeddedLogTest : public ::testing::Test {
 protected:
  Result<std::unique_ptr<EmbeddedLog>> open(uint32_t partitions = 2, uint64_t segment_bytes = 64ull << 20) {
    EmbeddedLogOptions o;
    o.dir = dir_.sub("log");
    o.name = "test";
    o.partitions = partitions;
    o.segment_bytes = segment_bytes;
    o.max_record_bytes = 4096;
    return EmbeddedLog::open(o);
  }
  std::string segment_path(uint32_t partition, uint64_t base) const {
    return dir_.sub("log") + "/p" + std::to_string(partition) + "/" + embedded_log::segment_file_name(base);
  }
  static std::vector<std::string> values(const std::vector<LogRecord>& records) {
    std::vector<std::string> out;
    for (const auto& r : records) out.push_back(r.value);
    return out;
  }

  testing::TempDir dir_;
};

TEST_F(EmbeddedLogTest, AppendsGetConsecutiveOffsetsPerPartition) {
  auto log = open().value();
  EXPECT_EQ(log->append_sync(0, "k", "a")->value, 0u);
  EXPECT_EQ(log->append_sync(0, "k", "b")->value, 1u);
  EXPECT_EQ(log->append_sync(1, "k", "c")->value, 0u);
  EXPECT_EQ(log->end_offset(0)->value, 2u);
  EXPECT_EQ(log->end_offset(1)->value, 1u);
  auto records = *log->read(0, Offset{0}, 10, 0ms);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(values(records), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(records[1].offset.value, 1u);
  EXPECT_EQ(records[1].partition, 0u);
  EXPECT_EQ(records[1].key, "k");
}

TEST_F(EmbeddedLogTest, ReadsFromAnyOffsetAcrossSegments) {
  auto log = open(1, 4096).value();  // small segments: ~40 records each
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(log->append_sync(0, "", "value-" + std::to_string(i) + std::string(60, 'x')).ok());
  }
  EXPECT_GT(std::distance(std::filesystem::directory_iterator(dir_.sub("log/p0")),
                          std::filesystem::directory_iterator()),
            10);
  for (uint64_t from : {0u, 1u, 39u, 40u, 41u, 500u, 998u, 999u}) {
    auto records = *log->read(0, Offset{from}, 3, 0ms);
    ASSERT_FALSE(records.empty()) << from;
    EXPECT_EQ(records[0].offset.value, from);
    EXPECT_EQ(records[0].value.substr(0, 6 + std::to_string(from).size()), "value-" + std::to_string(from));
    for (size_t i = 1; i < records.size(); ++i) EXPECT_EQ(records[i].offset.value, from + i);
  }
  auto all = *log->read(0, Offset{0}, 5000, 0ms);
  ASSERT_EQ(all.size(), 1000u);
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i].offset.value, i);
}

TEST_F(EmbeddedLogTest, ReadWaitsForTheNextAppend) {
  auto log = open().value();
  EXPECT_TRUE(log->read(0, Offset{0}, 10, 0ms)->empty());
  auto reader = std::async(std::launch::async, [&] { return log->read(0, Offset{0}, 10, 30s); });
  std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(log->append_sync(0, "", "late").ok());
  auto records = reader.get();
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].value, "late");
}

TEST_F(EmbeddedLogTest, CloseWakesAWaitingReader) {
  auto log = open().value();
  auto reader = std::async(std::launch::async, [&] { return log->read(0, Offset{0}, 10, 3600s); });
  std::this_thread::sleep_for(20ms);
  log->close();
  auto records = reader.get();
  ASSERT_TRUE(records.ok());
  EXPECT_TRUE(records->empty());
  EXPECT_EQ(log->append_sync(0, "", "x").code(), Errc::kTransport);
}

TEST_F(EmbeddedLogTest, RefusesBadAppendsAndReads) {
  auto log = open().value();
  EXPECT_EQ(log->append_sync(2, "", "x").code(), Errc::kInvalidArgument);
  EXPECT_EQ(log->append_sync(0, "", std::string(4097, 'x')).code(), Errc::kInvalidArgument);
  EXPECT_EQ(log->end_offset(0)->value, 0u);  // nothing half-written
  EXPECT_EQ(log->read(0, Offset{1}, 1, 0ms).code(), Errc::kInvalidArgument);
  EXPECT_EQ(log->read(5, Offset{0}, 1, 0ms).code(), Errc::kInvalidArgument);
}

TEST_F(EmbeddedLogTest, DataAndPositionsSurviveAReopen) {
  {
    auto log = open().value();
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(log->append_sync(1, "", std::to_string(i)).ok());
    ASSERT_TRUE(log->commit("fanout", 1, Offset{3}).ok());
  }
  auto log = open().value();
  EXPECT_EQ(log->end_offset(1)->value, 5u);
  EXPECT_EQ(log->append_sync(1, "", "5")->value, 5u);
  EXPECT_EQ(values(*log->read(1, Offset{3}, 10, 0ms)), (std::vector<std::string>{"3", "4", "5"}));
  EXPECT_EQ(log->committed("fanout", 1)->value(), Offset{3});
  EXPECT_FALSE(log->committed("fanout", 0)->has_value());
  EXPECT_FALSE(log->committed("archiver", 1)->has_value());
}

TEST_F(EmbeddedLogTest, CommitMayMoveBackButNotBeyondTheEnd) {
  auto log = open().value();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(log->append_sync(0, "", "x").ok());
  ASSERT_TRUE(log->commit("g", 0, Offset{3}).ok());
  ASSERT_TRUE(log->commit("g", 0, Offset{1}).ok());  // a replay starts this way
  EXPECT_EQ(log->committed("g", 0)->value(), Offset{1});
  EXPECT_EQ(log->commit("g", 0, Offset{4}).code(), Errc::kInvalidArgument);
  EXPECT_EQ(log->committed("g", 0)->value(), Offset{1});
  EXPECT_EQ(log->commit("../evil", 0, Offset{0}).code(), Errc::kInvalidArgument);
}

TEST_F(EmbeddedLogTest, TornTailIsCutOnOpenWithAWarning) {
  {
    auto log = open().value();
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(log->append_sync(0, "", "record-" + std::to_string(i)).ok());
  }
  // A crash in the middle of writing record 9: its last bytes never reached the disk.
  const std::string path = segment_path(0, 0);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);
  std::ostringstream said;
  EmbeddedLogOptions o;
  o.dir = dir_.sub("log");
  o.name = "test";
  o.partitions = 2;
  o.logger = std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::ostream_sink_mt>(said));
  auto log = EmbeddedLog::open(o).value();
  EXPECT_NE(said.str().find("torn tail"), std::string::npos) << said.str();
  EXPECT_NE(said.str().find("from offset 9 on"), std::string::npos) << said.str();
  EXPECT_EQ(log->end_offset(0)->value, 9u);
  EXPECT_EQ(log->append_sync(0, "", "after")->value, 9u);
  auto records = *log->read(0, Offset{8}, 10, 0ms);
  EXPECT_EQ(values(records), (std::vector<std::string>{"record-8", "after"}));
}

TEST_F(EmbeddedLogTest, GarbageAfterTheLastRecordIsCutOnOpen) {
  {
    auto log = open().value();
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(log->append_sync(0, "", "r").ok());
  }
  const std::string path = segment_path(0, 0);
  const auto clean_size = std::filesystem::file_size(path);
  {
    std::ofstream f(path, std::ios::app | std::ios::binary);
    f << std::string(100, '\x5a');  // e.g. a half-written frame whose length field is nonsense
  }
  auto log = open().value();
  EXPECT_EQ(log->end_offset(0)->value, 4u);
  EXPECT_EQ(std::filesystem::file_size(path), clean_size);
}

TEST_F(EmbeddedLogTest, AFlippedByteInTheLastRecordCutsIt) {
  {
    auto log = open().value();
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(log->append_sync(0, "", "value").ok());
  }
  const std::string path = segment_path(0, 0);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(path) - 2));
    f.put('!');
  }
  auto log = open().value();
  EXPECT_EQ(log->end_offset(0)->value, 3u);
}

TEST_F(EmbeddedLogTest, ADamagedSealedSegmentRefusesToOpen) {
  {
    auto log = open(1, 4096).value();
    for (int i = 0; i < 200; ++i) ASSERT_TRUE(log->append_sync(0, "", std::string(100, 'v')).ok());
  }
  const std::string path = segment_path(0, 0);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('!');
  }
  auto log = open(1, 4096);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.code(), Errc::kCorruptEntry);
  EXPECT_NE(log.error().message().find("not the last segment"), std::string::npos);
}

TEST_F(EmbeddedLogTest, ReopeningWithAnotherPartitionCountIsAConfigError) {
  { auto log = open(2).value(); }
  auto log = open(3);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.code(), Errc::kConfig);
  EXPECT_NE(log.error().message().find("2 partitions"), std::string::npos);
}

TEST_F(EmbeddedLogTest, ASecondOpenOfTheSameDirectoryIsRefused) {
  auto first = open().value();
  auto second = open();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.code(), Errc::kIo);
  EXPECT_NE(second.error().message().find("single-process"), std::string::npos);
}

TEST_F(EmbeddedLogTest, AppendsQueuedDuringAWriteShareOneGroupCommit) {
  auto log = open().value();
  constexpr int kQueued = 99;
  std::latch in_callback(1);
  std::latch queued(1);
  std::latch all_done(kQueued + 1);
  // The first append's callback runs on the writer thread; holding it there lets the others queue up.
  log->append(0, "", "first", [&](Result<Offset> r) {
    EXPECT_TRUE(r.ok());
    in_callback.count_down();
    queued.wait();
    all_done.count_down();
  });
  in_callback.wait();
  std::vector<uint64_t> offsets(kQueued);
  for (int i = 0; i < kQueued; ++i) {
    log->append(i % 2, "", "v", [&, i](Result<Offset> r) {
      offsets[i] = r->value;
      all_done.count_down();
    });
  }
  queued.count_down();
  all_done.wait();
  const auto stats = log->stats();
  EXPECT_EQ(stats.appends, 100u);
  EXPECT_EQ(stats.batches, 2u);
  EXPECT_EQ(stats.syncs, 2u);  // one journal sync per batch, though batch 2 touched partitions 0 and 1
  for (int i = 0; i < kQueued; ++i) {
    EXPECT_EQ(offsets[i], i % 2 == 0 ? 1 + i / 2 : i / 2) << i;  // call order within each partition
  }
}

TEST_F(EmbeddedLogTest, AppendsWithinTheBatchIntervalShareOneBatch) {
  EmbeddedLogOptions o;
  o.dir = dir_.sub("log");
  o.partitions = 2;
  o.batch_interval = 2s;
  auto log = EmbeddedLog::open(o).value();
  ASSERT_TRUE(log->append_sync(0, "", "first").ok());  // the writer was idle: a batch of its own, now
  ASSERT_EQ(log->stats().batches, 1u);
  // Three appends 20 ms apart, each finding the writer idle (without the interval each would be a
  // batch of its own), all before the interval since the first batch has passed: one batch.
  std::latch done(3);
  for (int i = 0; i < 3; ++i) {
    log->append(i % 2, "", "v" + std::to_string(i), [&](Result<Offset> r) {
      EXPECT_TRUE(r.ok());
      done.count_down();
    });
    std::this_thread::sleep_for(20ms);
  }
  done.wait();
  EXPECT_EQ(log->stats().batches, 2u);
  EXPECT_EQ(log->stats().appends, 4u);
  EXPECT_EQ(values(*log->read(0, Offset{0}, 10, 0ms)), (std::vector<std::string>{"first", "v0", "v2"}));
  EXPECT_EQ(values(*log->read(1, Offset{0}, 10, 0ms)), (std::vector<std::string>{"v1"}));
}

TEST_F(EmbeddedLogTest, CloseWritesTheAppendsWaitingOutTheBatchInterval) {
  EmbeddedLogOptions o;
  o.dir = dir_.sub("log");
  o.batch_interval = 60s;
  auto log = EmbeddedLog::open(o).value();
  ASSERT_TRUE(log->append_sync(0, "", "a").ok());
  std::promise<Result<Offset>> second;
  log->append(0, "", "b", [&](Result<Offset> r) { second.set_value(std::move(r)); });
  log->close();  // does not wait the minute out: the waiting append is written and acknowledged
  auto r = second.get_future().get();
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->value, 1u);
  log.reset();
  auto reopened = EmbeddedLog::open(o).value();
  EXPECT_EQ(values(*reopened->read(0, Offset{0}, 10, 0ms)), (std::vector<std::string>{"a", "b"}));
}

TEST_F(EmbeddedLogTest, ConcurrentWritersAndReadersSeeEveryRecordOnce) {
  auto log = open(1, 8192).value();
  constexpr int kWriters = 4, kEach = 500;
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kEach; ++i)
        ASSERT_TRUE(log->append_sync(0, "", std::to_string(w * kEach + i)).ok());
    });
  }
  std::vector<bool> seen(kWriters * kEach, false);
  uint64_t next = 0;
  while (next < kWriters * kEach) {
    auto records = log->read(0, Offset{next}, 64, 5s);
    ASSERT_TRUE(records.ok());
    for (const auto& r : *records) {
      ASSERT_EQ(r.offset.value, next++);
      const int v = std::stoi(r.value);
      ASSERT_FALSE(seen[v]);
      seen[v] = true;
    }
  }
  for (auto& t : writers) t.join();
  EXPECT_LE(log->stats().batches, log->stats().appends);
}

}  // namespace
}  // namespace qim

namespace qim {
namespace {

// Decision 106: while the writer is busy with a batch (here: it waits out a batch interval of an hour, as a
// writer waits for an fsync that does not return), appends past max_queued_appends are refused at once
// (Timeout, not written) instead of piling up; the ones queued are made durable (here by close()).
TEST(EmbeddedLogQueueBound, AppendsPastTheBoundAreRefusedAtOnceWhileTheWriterIsBusy) {
  testing::TempDir dir;
  EmbeddedLogOptions o;
  o.dir = dir.sub("log");
  o.name = "outbox";
  o.partitions = 1;
  o.batch_interval = std::chrono::hours(1);  // after the first batch, the next is an hour away
  o.max_queued_appends = 4;
  // Declared before the log: a failed assertion closes the log, which answers the queued appends into them.
  std::vector<std::promise<Result<Offset>>> outcomes(6);
  std::vector<std::future<Result<Offset>>> futures;
  for (auto& p : outcomes) futures.push_back(p.get_future());
  auto log = EmbeddedLog::open(o).value();
  ASSERT_TRUE(log->append_sync(0, "k", "first").ok());  // the first batch starts at once

  for (size_t i = 0; i < outcomes.size(); ++i)
    log->append(0, "k", "v" + std::to_string(i), [&p = outcomes[i]](Result<Offset> r) { p.set_value(r); });
  // The two past the bound are answered without waiting for the writer.
  for (size_t i = 4; i < 6; ++i) {
    ASSERT_EQ(futures[i].wait_for(0s), std::future_status::ready) << "append " << i << " was queued";
    auto r = futures[i].get();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.code(), Errc::kTimeout) << r.error().to_string();
    EXPECT_NE(r.error().message().find("QIM_LOG_MAX_QUEUED_APPENDS"), std::string::npos);
  }
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(futures[i].wait_for(0s), std::future_status::timeout) << "append " << i << " was not queued";
  EXPECT_EQ(log->stats().refused_queue_full, 2u);
  log->close();  // cuts the interval: the queued four are made durable
  for (size_t i = 0; i < 4; ++i) {
    auto r = futures[i].get();
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->value, i + 1);
  }
  log.reset();
  auto reopened = EmbeddedLog::open(o).value();
  EXPECT_EQ(reopened->end_offset(0)->value, 5u) << "a refused append was written";
}

}  // namespace
}  // namespace qim
