// qim-inbox-bench's run on the in-process engines, small: every answer it times is right when the inbox is
// the store's sink, and its checks do catch wrong answers (a store written without the inbox). Times are
// printed by the benchmark, never asserted here.
#include "bench/inbox/inbox_run.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "inbox/inbox.h"
#include "inbox/open_inbox.h"
#include "mailbox/store_options.h"

namespace qim::inbox_bench {
namespace {

Options small(const std::string& backend) {
  Options o;
  o.backend = backend;
  o.conversations = 30;
  o.unread = 12;
  o.repetitions = 5;
  o.warmup = 2;
  o.limit = 10;
  o.progress = false;
  return o;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "qim-inbox-bench-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    if (!path_.empty()) std::filesystem::remove_all(path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Opens `backend`'s inbox and store as qim-inbox-bench does (the inbox the store's sink unless `no_sink`)
// and runs `o` on them.
Result<Report> run_on(const Options& o, bool no_sink = false) {
  TempDir dir;
  if (dir.path().empty()) return Error(Errc::kIo, "mkdtemp");
  StoreOptions options;
  options.backend = o.backend;
  options.shard_count = 4;
  options.data_dir = dir.path() + "/mailbox";
  QIM_ASSIGN_OR_RETURN(auto shards, ShardMap::create(4));
  QIM_ASSIGN_OR_RETURN(auto inbox, open_inbox(options, dir.path()));
  QIM_ASSIGN_OR_RETURN(auto store, open_mailbox_store(options, no_sink ? nullptr : inbox.get()));
  return run(o, *store, *inbox, shards);
}

class InboxBenchRunTest : public ::testing::TestWithParam<std::string> {};

TEST_P(InboxBenchRunTest, EveryAnswerTimedIsRight) {
  const Options o = small(GetParam());
  auto report = run_on(o);
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  EXPECT_EQ(report->messages, 12u + 29u);
  ASSERT_EQ(report->series.size(), 4u);
  for (const Series& s : report->series) {
    EXPECT_EQ(s.check, "ok") << s.operation;
    EXPECT_EQ(s.calls, 5u) << s.operation;
    EXPECT_GT(s.reads_per_call, 0) << s.operation;
    EXPECT_LE(s.p50_ms, s.p99_ms) << s.operation;
    EXPECT_LE(s.p99_ms, s.max_ms) << s.operation;
  }
  EXPECT_FALSE(report->wrong());
}

INSTANTIATE_TEST_SUITE_P(InProcess, InboxBenchRunTest, ::testing::Values("memory", "embedded"));

TEST(InboxBenchRun, CountsAboveTheCapAreCheckedCapped) {
  Options o = small("memory");
  o.unread = kUnreadCap + 3;
  auto report = run_on(o);
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  EXPECT_FALSE(report->wrong()) << report->series[2].check;
}

TEST(InboxBenchRun, WrongAnswersAreReportedNotHidden) {
  // The store writes no inbox rows: the list is empty, nothing is unread, there is nothing to read.
  auto report = run_on(small("memory"), /*no_sink=*/true);
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  ASSERT_EQ(report->series.size(), 4u);
  EXPECT_EQ(report->series[0].check, "0 items");
  EXPECT_EQ(report->series[1].check, "0 rows");
  EXPECT_EQ(report->series[2].check, "unread 0");
  EXPECT_EQ(report->series[3].check, "no index rows");
  EXPECT_TRUE(report->wrong());
}

TEST(InboxBenchRun, TargetsAreTheIssuesForTheFirstPageOnly) {
  Series page{.operation = "conversations (first 50 of 10000)", .p99_ms = 19};
  EXPECT_EQ(target_of("embedded", page), "P99 <= 20 ms: met");
  page.p99_ms = 21;
  EXPECT_EQ(target_of("embedded", page), "P99 <= 20 ms: not met");
  EXPECT_EQ(target_of("scylla", page), "P99 <= 50 ms: met");
  EXPECT_EQ(target_of("redis", page), "-");
  EXPECT_EQ(target_of("embedded", Series{.operation = "unread (1000 unread)"}), "-");
}

}  // namespace
}  // namespace qim::inbox_bench
