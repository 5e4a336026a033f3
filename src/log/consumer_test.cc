#include "log/consumer.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "log/testing/temp_dir.h"
#include "log/testing/test_log.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

class ConsumerTest : public ::testing::Test {
 protected:
  void SetUp() override { log_ = testing::open_test_log(dir_.sub("log"), 2); }
  void append(uint32_t partition, int n) {
    for (int i = 0; i < n; ++i)
      ASSERT_TRUE(log_->append_sync(partition, "", std::to_string(next_value_++)).ok());
  }
  ConsumerOptions options() {
    ConsumerOptions o;
    o.group = "g";
    o.partitions = {0, 1};
    o.batch_max = 4;
    o.poll_wait = 10ms;
    o.retry_min = 1ms;
    return o;
  }
  // A handler recording what it saw, per partition, in order.
  BatchHandler recorder() {
    return [this](uint32_t p, std::span<const LogRecord> batch) {
      std::lock_guard lock(mu_);
      for (const auto& r : batch) seen_[p].push_back(r.offset.value);
      return ok_status();
    };
  }
  std::vector<uint64_t> seen(uint32_t p) {
    std::lock_guard lock(mu_);
    return seen_[p];
  }
  static std::vector<uint64_t> iota(uint64_t from, uint64_t to) {
    std::vector<uint64_t> out;
    for (uint64_t i = from; i < to; ++i) out.push_back(i);
    return out;
  }

  testing::TempDir dir_;
  std::unique_ptr<EmbeddedLog> log_;
  int next_value_ = 0;
  std::mutex mu_;
  std::map<uint32_t, std::vector<uint64_t>> seen_;
};

TEST_F(ConsumerTest, DrainsEveryPartitionAndResumesFromTheCommittedPosition) {
  append(0, 10);
  append(1, 3);
  {
    LogConsumer c(*log_, options(), recorder());
    ASSERT_TRUE(c.start().ok());
    ASSERT_TRUE(c.drain(60s).ok());
  }
  EXPECT_EQ(seen(0), iota(0, 10));
  EXPECT_EQ(seen(1), iota(0, 3));
  EXPECT_EQ(log_->committed("g", 0)->value(), Offset{10});
  EXPECT_EQ(log_->committed("g", 1)->value(), Offset{3});

  append(0, 2);
  LogConsumer c(*log_, options(), recorder());
  ASSERT_TRUE(c.start().ok());
  ASSERT_TRUE(c.drain(60s).ok());
  EXPECT_EQ(seen(0), iota(0, 12));  // 10 and 11 only: nothing handled twice after a clean stop
}

TEST_F(ConsumerTest, AFailedBatchIsHandedOverAgainAndNothingIsSkipped) {
  append(0, 6);
  int failures = 0;
  auto inner = recorder();
  LogConsumer c(*log_, options(), [&](uint32_t p, std::span<const LogRecord> batch) -> Status {
    if (p == 0 && batch.front().offset.value == 4 && failures < 3) {
      ++failures;
      return Error(Errc::kTransport, "store unavailable");
    }
    return inner(p, batch);
  });
  ASSERT_TRUE(c.start().ok());
  ASSERT_TRUE(c.drain(60s).ok());
  EXPECT_EQ(failures, 3);
  EXPECT_EQ(seen(0), iota(0, 6));
}

TEST_F(ConsumerTest, DrainTimesOutWhileABatchKeepsFailing) {
  append(1, 1);
  LogConsumer c(*log_, options(), [](uint32_t, std::span<const LogRecord>) -> Status {
    return Error(Errc::kTransport, "down");
  });
  ASSERT_TRUE(c.start().ok());
  Status s = c.drain(50ms);
  EXPECT_EQ(s.code(), Errc::kTimeout);
  EXPECT_FALSE(log_->committed("g", 1)->has_value());
}

TEST_F(ConsumerTest, SeekBackReplaysFromThere) {
  append(0, 5);
  LogConsumer c(*log_, options(), recorder());
  ASSERT_TRUE(c.start().ok());
  while (c.positions()[0].next.value < 5) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(c.seek(0, Offset{2}).ok());
  EXPECT_EQ(c.seek(7, Offset{0}).code(), Errc::kInvalidArgument);
  while (seen(0).size() < 8) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(c.drain(60s).ok());
  std::vector<uint64_t> want = iota(0, 5);
  for (uint64_t i = 2; i < 5; ++i) want.push_back(i);
  EXPECT_EQ(seen(0), want);
  EXPECT_EQ(log_->committed("g", 0)->value(), Offset{5});
}

TEST_F(ConsumerTest, CommitsWhileRunningAtMostEveryInterval) {
  append(1, 3);
  auto o = options();
  o.commit_interval = 5ms;
  LogConsumer c(*log_, o, recorder());
  ASSERT_TRUE(c.start().ok());
  // No stop, no drain: the position must still reach the log once the interval has passed.
  while (!log_->committed("g", 1)->has_value() || log_->committed("g", 1)->value() != Offset{3}) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(seen(1), iota(0, 3));
  c.stop();
}

TEST_F(ConsumerTest, BeforeCommitRunsOncePerCommitNotPerBatchAndAFailureHoldsThePositionBack) {
  append(0, 10);  // three batches of at most 4
  auto o = options();
  o.commit_interval = 1h;  // only the drain commits
  std::mutex hook_mu;
  std::vector<std::pair<uint32_t, std::optional<Offset>>> calls;  // partition, position committed then
  o.before_commit = [&](uint32_t p) -> Status {
    std::lock_guard lock(hook_mu);
    calls.emplace_back(p, log_->committed("g", p).value());
    if (calls.size() <= 2) return Error(Errc::kIo, "sync failed");
    return ok_status();
  };
  LogConsumer c(*log_, o, recorder());
  ASSERT_TRUE(c.start().ok());
  while (seen(0).size() < 10) std::this_thread::sleep_for(1ms);
  {
    std::lock_guard lock(hook_mu);
    EXPECT_TRUE(calls.empty()) << "the hook ran after a batch, not before a commit";
  }
  ASSERT_TRUE(c.drain(60s).ok());
  ASSERT_EQ(calls.size(), 3u);  // two failures, then the commit; partition 1 had nothing to commit
  for (const auto& [p, committed] : calls) {
    EXPECT_EQ(p, 0u);
    EXPECT_FALSE(committed.has_value()) << "a failed hook let the position through";
  }
  EXPECT_EQ(log_->committed("g", 0)->value(), Offset{10});
  EXPECT_EQ(seen(0), iota(0, 10));  // the failures held the commit back, not the records
}

TEST_F(ConsumerTest, StartRefusesAnUnknownPartition) {
  auto o = options();
  o.partitions = {0, 2};
  LogConsumer c(*log_, o, recorder());
  EXPECT_EQ(c.start().code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace qim
