// The Log contract, run by every implementation (log_contract.h).
#include <future>
#include <latch>
#include <thread>

#include "log/tests/log_contract.h"

namespace qim::testing {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> values(const std::vector<LogRecord>& records) {
  std::vector<std::string> out;
  for (const auto& r : records) out.push_back(r.value);
  return out;
}

// Reads `count` records of `partition` from `from` on in batches of `batch`, failing on any gap.
std::vector<LogRecord> read_all(Log& log, uint32_t partition, uint64_t from, size_t count,
                                size_t batch = 100) {
  std::vector<LogRecord> out;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (out.size() < count && std::chrono::steady_clock::now() < deadline) {
    auto got = log.read(partition, Offset{from + out.size()}, std::min(batch, count - out.size()), 1s);
    if (!got.ok()) {
      ADD_FAILURE() << "read: " << got.error().to_string();
      break;
    }
    for (auto& r : *got) {
      EXPECT_EQ(r.offset.value, from + out.size());
      out.push_back(std::move(r));
    }
  }
  EXPECT_EQ(out.size(), count) << "partition " << partition;
  return out;
}

TEST_P(LogContractTest, AppendsGetConsecutiveOffsetsPerPartition) {
  auto log = open(2);
  ASSERT_TRUE(log);
  for (uint64_t i = 0; i < 5; ++i) EXPECT_EQ(log->append_sync(0, "k", "a" + std::to_string(i))->value, i);
  EXPECT_EQ(log->append_sync(1, "k", "b0")->value, 0u);
  EXPECT_EQ(log->append_sync(0, "k", "a5")->value, 5u);
  EXPECT_EQ(log->end_offset(0)->value, 6u);
  EXPECT_EQ(log->end_offset(1)->value, 1u);
  EXPECT_EQ(log->start_offset(0)->value, 0u);
  auto records = read_all(*log, 0, 0, 6);
  EXPECT_EQ(values(records), (std::vector<std::string>{"a0", "a1", "a2", "a3", "a4", "a5"}));
  EXPECT_EQ(records[5].partition, 0u);
  EXPECT_EQ(records[5].key, "k");
}

TEST_P(LogContractTest, AsynchronousAppendsToOnePartitionAreDurableInCallOrder) {
  auto log = open(1);
  ASSERT_TRUE(log);
  constexpr int kCount = 500;
  std::vector<std::promise<Result<Offset>>> done(kCount);
  for (int i = 0; i < kCount; ++i) {
    log->append(0, "", std::to_string(i), [&done, i](Result<Offset> r) { done[i].set_value(std::move(r)); });
  }
  for (int i = 0; i < kCount; ++i) {
    auto r = done[i].get_future().get();
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->value, static_cast<uint64_t>(i));
  }
  auto records = read_all(*log, 0, 0, kCount, 64);
  for (int i = 0; i < kCount && i < static_cast<int>(records.size()); ++i)
    ASSERT_EQ(records[i].value, std::to_string(i));
}

TEST_P(LogContractTest, AFreshInstanceReadsWhatTheFirstAppended) {
  auto clock = std::make_shared<ManualClock>(1'700'000'000'000);
  {
    auto first = open(3, 4096, clock);
    ASSERT_TRUE(first);
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(first
                      ->append_sync(static_cast<uint32_t>(i % 3), "key" + std::to_string(i),
                                    "value" + std::to_string(i))
                      .ok());
      clock->advance_ms(1000);
    }
  }
  auto fresh = open(3);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->partition_count(), 3u);
  EXPECT_EQ(fresh->end_offset(0)->value, 7u);
  EXPECT_EQ(fresh->end_offset(1)->value, 7u);
  EXPECT_EQ(fresh->end_offset(2)->value, 6u);
  auto records = read_all(*fresh, 1, 0, 7);
  ASSERT_EQ(records.size(), 7u);
  for (size_t j = 0; j < records.size(); ++j) {
    const int i = static_cast<int>(j) * 3 + 1;
    EXPECT_EQ(records[j].key, "key" + std::to_string(i));
    EXPECT_EQ(records[j].value, "value" + std::to_string(i));
    EXPECT_EQ(records[j].timestamp_ms, 1'700'000'000'000 + i * 1000) << "the append time is the record's";
  }
  EXPECT_EQ(fresh->append_sync(1, "", "after")->value, 7u) << "offsets continue, never reused";
}

TEST_P(LogContractTest, ReadsFromAnyOffset) {
  auto log = open(1);
  ASSERT_TRUE(log);
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(log->append_sync(0, "", "v" + std::to_string(i)).ok());
  for (uint64_t from : {299u, 0u, 150u, 1u, 151u, 298u, 42u}) {
    auto records = log->read(0, Offset{from}, 3, 5s);
    ASSERT_TRUE(records.ok()) << records.error().to_string();
    ASSERT_FALSE(records->empty()) << from;
    EXPECT_LE(records->size(), 3u);
    for (size_t i = 0; i < records->size(); ++i) {
      EXPECT_EQ((*records)[i].offset.value, from + i);
      EXPECT_EQ((*records)[i].value, "v" + std::to_string(from + i));
    }
  }
  EXPECT_TRUE(log->read(0, Offset{300}, 10, 0ms)->empty()) << "at the end: nothing yet";
  EXPECT_EQ(log->read(0, Offset{301}, 10, 0ms).code(), Errc::kInvalidArgument) << "beyond the end";
}

TEST_P(LogContractTest, AReadWithoutWaitReturnsTheRecordsThatAreThere) {
  {
    auto first = open(1);
    ASSERT_TRUE(first);
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(first->append_sync(0, "", std::to_string(i)).ok());
  }
  // As the gateway's de-dup rebuild and the replay horizon read: wait 0, at positions of their choice.
  auto log = open(1);
  ASSERT_TRUE(log);
  for (uint64_t from : {10u, 49u, 0u, 11u, 30u}) {
    auto records = log->read(0, Offset{from}, 1, 0ms);
    ASSERT_TRUE(records.ok()) << records.error().to_string();
    ASSERT_EQ(records->size(), 1u) << from;
    EXPECT_EQ((*records)[0].value, std::to_string(from));
  }
  uint64_t next = 0;
  while (next < 50) {
    auto records = log->read(0, Offset{next}, 1000, 0ms);
    ASSERT_TRUE(records.ok()) << records.error().to_string();
    ASSERT_FALSE(records->empty()) << "nothing at " << next << " of 50";
    EXPECT_EQ(records->front().offset.value, next);
    next = records->back().offset.value + 1;
  }
  EXPECT_TRUE(log->read(0, Offset{50}, 10, 0ms)->empty());
}

TEST_P(LogContractTest, ReadWaitsForTheNextAppend) {
  auto log = open(2);
  ASSERT_TRUE(log);
  ASSERT_TRUE(log->append_sync(1, "", "first").ok());
  EXPECT_TRUE(log->read(1, Offset{1}, 10, 50ms)->empty());
  auto reader = std::async(std::launch::async, [&] { return log->read(1, Offset{1}, 10, 60s); });
  ASSERT_EQ(reader.wait_for(100ms), std::future_status::timeout) << "returned before anything was appended";
  ASSERT_TRUE(log->append_sync(1, "", "late").ok());
  auto records = reader.get();
  ASSERT_TRUE(records.ok()) << records.error().to_string();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].value, "late");
  EXPECT_EQ((*records)[0].offset.value, 1u);
}

TEST_P(LogContractTest, ConcurrentReadsOfDifferentPartitions) {
  constexpr uint32_t kPartitions = 4;
  constexpr int kPerPartition = 150;
  auto log = open(kPartitions);
  ASSERT_TRUE(log);
  std::latch start(kPartitions + 1);
  std::vector<std::future<std::vector<LogRecord>>> readers;
  for (uint32_t p = 0; p < kPartitions; ++p) {
    readers.push_back(std::async(std::launch::async, [&, p] {
      start.arrive_and_wait();
      return read_all(*log, p, 0, kPerPartition, 7);  // small batches: many reads while appends go on
    }));
  }
  start.arrive_and_wait();
  for (int i = 0; i < kPerPartition; ++i) {
    for (uint32_t p = 0; p < kPartitions; ++p) {
      log->append(p, "", std::to_string(p) + ":" + std::to_string(i),
                  [](Result<Offset> r) { EXPECT_TRUE(r.ok()) << r.error().to_string(); });
    }
  }
  for (uint32_t p = 0; p < kPartitions; ++p) {
    auto records = readers[p].get();
    ASSERT_EQ(records.size(), static_cast<size_t>(kPerPartition));
    for (int i = 0; i < kPerPartition; ++i)
      ASSERT_EQ(records[i].value, std::to_string(p) + ":" + std::to_string(i));
  }
}

TEST_P(LogContractTest, TwoReadersOfOnePartitionKeepTheirOwnPositions) {
  auto log = open(1);
  ASSERT_TRUE(log);
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(log->append_sync(0, "", std::to_string(i)).ok());
  // As fanout and the archiver read one Outbox partition, each at its own position.
  auto a = std::async(std::launch::async, [&] { return read_all(*log, 0, 0, 200, 9); });
  auto b = std::async(std::launch::async, [&] { return read_all(*log, 0, 120, 80, 5); });
  auto ra = a.get();
  auto rb = b.get();
  ASSERT_EQ(ra.size(), 200u);
  ASSERT_EQ(rb.size(), 80u);
  for (size_t i = 0; i < rb.size(); ++i) EXPECT_EQ(rb[i].value, std::to_string(120 + i));
  for (size_t i = 0; i < ra.size(); ++i) EXPECT_EQ(ra[i].value, std::to_string(i));
}

TEST_P(LogContractTest, CommittedPositionsPerGroupSurviveAFreshInstance) {
  {
    auto log = open(2);
    ASSERT_TRUE(log);
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(log->append_sync(i % 2, "", std::to_string(i)).ok());
    EXPECT_EQ(log->committed("fanout", 0)->has_value(), false) << "never committed";
    ASSERT_TRUE(log->commit("fanout", 0, Offset{3}).ok());
    ASSERT_TRUE(log->commit("fanout", 1, Offset{5}).ok());
    ASSERT_TRUE(log->commit("archiver", 0, Offset{1}).ok());
    ASSERT_TRUE(log->commit("fanout", 0, Offset{4}).ok());  // the later commit wins
    EXPECT_EQ(log->commit("fanout", 1, Offset{6}).code(), Errc::kInvalidArgument) << "beyond the end";
  }
  auto fresh = open(2);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->committed("fanout", 0)->value_or(Offset{99}).value, 4u);
  EXPECT_EQ(fresh->committed("fanout", 1)->value_or(Offset{99}).value, 5u);
  EXPECT_EQ(fresh->committed("archiver", 0)->value_or(Offset{99}).value, 1u) << "groups are independent";
  EXPECT_FALSE(fresh->committed("archiver", 1)->has_value());
  EXPECT_FALSE(fresh->committed("other", 0)->has_value());
  // An earlier position may be committed: that is how a replay starts.
  ASSERT_TRUE(fresh->commit("fanout", 0, Offset{0}).ok());
  EXPECT_EQ(fresh->committed("fanout", 0)->value_or(Offset{99}).value, 0u);
  EXPECT_EQ(fresh->committed("fanout", 2).code(), Errc::kInvalidArgument);
}

TEST_P(LogContractTest, TwoInstancesCommitDifferentPartitionsOfOneGroup) {
  if (!log_->multi_instance()) GTEST_SKIP() << GetParam().name << " is single-process";
  auto a = open(4);
  auto b = open(4);
  ASSERT_TRUE(a && b);
  for (uint32_t p = 0; p < 4; ++p) {
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(a->append_sync(p, "", "x").ok());
  }
  // Two nodes own different shards of the mailbox log and commit for one group, interleaved.
  for (uint64_t next = 1; next <= 5; ++next) {
    ASSERT_TRUE(a->commit("node", 0, Offset{next}).ok());
    ASSERT_TRUE(b->commit("node", 1, Offset{next - 1}).ok());
    ASSERT_TRUE(a->commit("node", 2, Offset{next}).ok());
    ASSERT_TRUE(b->commit("node", 3, Offset{next}).ok());
  }
  auto fresh = open(4);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->committed("node", 0)->value_or(Offset{99}).value, 5u);
  EXPECT_EQ(fresh->committed("node", 1)->value_or(Offset{99}).value, 4u);
  EXPECT_EQ(fresh->committed("node", 2)->value_or(Offset{99}).value, 5u);
  EXPECT_EQ(fresh->committed("node", 3)->value_or(Offset{99}).value, 5u);
}

TEST_P(LogContractTest, APartitionCountMismatchIsRefused) {
  ASSERT_TRUE(open(2));
  auto again = log_->open(3);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.code(), Errc::kConfig);
  EXPECT_NE(again.error().message().find("2 partitions"), std::string::npos) << again.error().message();
  EXPECT_NE(again.error().message().find('3'), std::string::npos) << again.error().message();
}

TEST_P(LogContractTest, BadAppendsAndReadsAreRefusedAndNothingIsWritten) {
  auto log = open(2, 4096);
  ASSERT_TRUE(log);
  EXPECT_EQ(log->max_record_bytes(), 4096u);
  EXPECT_EQ(log->append_sync(0, "", std::string(4097, 'x')).code(), Errc::kInvalidArgument);
  EXPECT_EQ(log->append_sync(2, "", "x").code(), Errc::kInvalidArgument);
  EXPECT_EQ(log->end_offset(0)->value, 0u);
  EXPECT_EQ(log->append_sync(0, "", std::string(4096, 'y'))->value, 0u) << "exactly the limit is taken";
  auto records = log->read(0, Offset{0}, 10, 5s);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].value.size(), 4096u);
  EXPECT_EQ(log->read(2, Offset{0}, 1, 0ms).code(), Errc::kInvalidArgument);
  EXPECT_EQ(log->end_offset(2).code(), Errc::kInvalidArgument);
  EXPECT_EQ(log->commit("g", 2, Offset{0}).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace qim::testing
