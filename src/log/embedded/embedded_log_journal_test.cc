// The embedded log's journal (journal.h): one sync per batch, and what a power loss takes from the
// segments' unsynced tails comes back from it on open. A power loss is imitated by copying the log's
// directory while the log is open (the journal synced, no checkpoint since) and cutting the copy's
// segments back, as a lost page cache would.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "log/embedded/embedded_log.h"
#include "log/embedded/frame.h"
#include "log/embedded/segment.h"
#include "log/testing/temp_dir.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

class EmbeddedLogJournalTest : public ::testing::Test {
 protected:
  Result<std::unique_ptr<EmbeddedLog>> open(const std::string& dir, uint64_t journal_bytes = 8ull << 20) {
    EmbeddedLogOptions o;
    o.dir = dir;
    o.name = "test";
    o.partitions = 2;
    o.max_record_bytes = 4096;
    o.journal_bytes = journal_bytes;
    o.logger = std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::ostream_sink_mt>(said_));
    return EmbeddedLog::open(o);
  }
  static std::string segment(const std::string& dir, uint32_t partition) {
    return dir + "/p" + std::to_string(partition) + "/" + embedded_log::segment_file_name(0);
  }
  static std::vector<std::string> values(EmbeddedLog& log, uint32_t partition) {
    std::vector<std::string> out;
    auto records = log.read(partition, Offset{0}, 1000, 0ms);
    EXPECT_TRUE(records.ok());
    if (records.ok()) {
      for (const auto& r : *records) out.push_back(r.value);
    }
    return out;
  }
  static std::vector<std::string> numbered(const std::string& prefix, int n) {
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
    return out;
  }
  // The state a power loss could leave: what the open log has on disk now, page cache included.
  std::string crash_copy() {
    const std::string copy = dir_.sub("copy");
    std::filesystem::copy(dir_.sub("log"), copy, std::filesystem::copy_options::recursive);
    return copy;
  }

  testing::TempDir dir_;
  std::ostringstream said_;
};

TEST_F(EmbeddedLogJournalTest, RecordsAPowerLossTookFromTheSegmentsComeBackFromTheJournal) {
  std::string copy;
  {
    auto log = open(dir_.sub("log")).value();
    for (const auto& v : numbered("r-", 6)) ASSERT_TRUE(log->append_sync(0, "k", v).ok());
    for (const auto& v : numbered("s-", 3)) ASSERT_TRUE(log->append_sync(1, "", v).ok());
    copy = crash_copy();
  }
  // The page cache lost all but two records of partition 0 and everything of partition 1.
  std::filesystem::resize_file(segment(copy, 0), 2 * embedded_log::frame_size(1, 3));
  std::filesystem::resize_file(segment(copy, 1), 0);
  {
    auto log = open(copy).value();
    EXPECT_EQ(log->stats().replayed, 7u);
    EXPECT_NE(said_.str().find("7 records restored from the journal"), std::string::npos) << said_.str();
    EXPECT_EQ(values(*log, 0), numbered("r-", 6));
    EXPECT_EQ(values(*log, 1), numbered("s-", 3));
    EXPECT_EQ(log->append_sync(0, "", "next")->value, 6u);  // offsets run on, none reused
  }
  auto reopened = open(copy).value();  // the open after the replay checkpointed: nothing to replay now
  EXPECT_EQ(reopened->stats().replayed, 0u);
  auto want = numbered("r-", 6);
  want.push_back("next");
  EXPECT_EQ(values(*reopened, 0), want);
}

TEST_F(EmbeddedLogJournalTest, AFullJournalCheckpointsAndLosesNothing) {
  const std::string body(100, 'x');
  {
    auto log = open(dir_.sub("log"), embedded_log::kMinJournalBytes).value();  // 4 KiB of entries
    for (int i = 0; i < 200; ++i) ASSERT_TRUE(log->append_sync(i % 2, "", body + std::to_string(i)).ok());
    EXPECT_GE(log->stats().checkpoints, 5u);  // about 28 single-record batches per generation
    EXPECT_GE(log->stats().syncs, 200u);
  }
  auto log = open(dir_.sub("log"), embedded_log::kMinJournalBytes).value();
  EXPECT_EQ(log->stats().replayed, 0u);
  auto records = *log->read(1, Offset{0}, 1000, 0ms);
  ASSERT_EQ(records.size(), 100u);
  EXPECT_EQ(records.back().value, body + "199");
}

TEST_F(EmbeddedLogJournalTest, ATornEntryEndsTheReplay) {
  std::string copy;
  {
    auto log = open(dir_.sub("log")).value();
    for (const auto& v : numbered("r-", 3)) ASSERT_TRUE(log->append_sync(0, "", v).ok());  // 3 entries
    copy = crash_copy();
  }
  // Entry 2 torn (a byte of its frame changed), and partition 0's segment lost.
  const uint64_t entry = 12 + 4 + embedded_log::frame_size(0, 3);
  {
    std::fstream f(copy + "/JOURNAL", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(embedded_log::kJournalHeaderBytes + entry + entry - 1));
    f.put('!');
  }
  std::filesystem::resize_file(segment(copy, 0), 0);
  auto log = open(copy).value();
  EXPECT_EQ(values(*log, 0), numbered("r-", 1));
}

TEST_F(EmbeddedLogJournalTest, AJournalWithNoValidHeaderIsRefused) {
  { auto log = open(dir_.sub("log")).value(); }
  {
    std::fstream f(dir_.sub("log") + "/JOURNAL", std::ios::in | std::ios::out | std::ios::binary);
    f << std::string(1024, 'x');
  }
  auto log = open(dir_.sub("log"));
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.code(), Errc::kCorruptEntry);
  EXPECT_NE(log.error().message().find("JOURNAL"), std::string::npos) << log.error().message();
}

TEST_F(EmbeddedLogJournalTest, AJournalWhoseCreationWasInterruptedIsCreatedAgain) {
  const std::string dir = dir_.sub("log");
  {
    auto log = open(dir).value();
    ASSERT_TRUE(log->append_sync(0, "", "kept").ok());
  }
  // A crash while the journal was being created (before this version, or before its rename): no journal,
  // and a headerless temporary file.
  std::filesystem::remove(dir + "/JOURNAL");
  std::ofstream(dir + "/JOURNAL.tmp") << std::string(8192, '\0');
  auto log = open(dir).value();
  EXPECT_EQ(values(*log, 0), std::vector<std::string>{"kept"});
  EXPECT_TRUE(std::filesystem::exists(dir + "/JOURNAL"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/JOURNAL.tmp"));
  EXPECT_EQ(log->append_sync(0, "", "next")->value, 1u);
}

TEST_F(EmbeddedLogJournalTest, ATooSmallJournalIsAConfigError) {
  auto log = open(dir_.sub("log"), 4096);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.code(), Errc::kConfig);
  EXPECT_NE(log.error().message().find("journal_bytes"), std::string::npos);
}

}  // namespace
}  // namespace qim
