// The embedded log's retention (QIM_OUTBOX_RETENTION_MS): whole sealed segments whose records are all
// older than the period are deleted, by append time on the log's clock (a manual one here).
#include <gtest/gtest.h>

#include <filesystem>

#include "log/embedded/embedded_log.h"
#include "log/embedded/segment.h"
#include "log/testing/temp_dir.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kStartMs = 20'000 * kDayMs;
constexpr int64_t kRetention = kDayMs;

class EmbeddedLogRetentionTest : public ::testing::Test {
 protected:
  Result<std::unique_ptr<EmbeddedLog>> open(std::optional<int64_t> retention = kRetention) {
    EmbeddedLogOptions o;
    o.dir = dir_.sub("log");
    o.name = "outbox";
    o.partitions = 2;
    o.segment_bytes = 4096;  // ~40 records of the size below per segment
    o.max_record_bytes = 4096;
    o.clock = clock_;
    o.retention_ms = retention;
    o.retention_check_interval = 3600s;  // the test calls enforce_retention() itself
    return EmbeddedLog::open(o);
  }
  static void append(EmbeddedLog& log, uint32_t partition, int n, int from = 0) {
    for (int i = from; i < from + n; ++i) {
      ASSERT_TRUE(log.append_sync(partition, "", "value-" + std::to_string(i) + std::string(60, 'x')).ok());
    }
  }
  size_t segment_files(uint32_t partition) const {
    const auto dir = dir_.sub("log/p" + std::to_string(partition));
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (embedded_log::parse_segment_file_name(e.path().filename().string())) ++n;
    }
    return n;
  }

  testing::TempDir dir_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(kStartMs);
};

TEST_F(EmbeddedLogRetentionTest, OldSealedSegmentsAreDeletedAndTheLogStartsLater) {
  auto log = open().value();
  append(*log, 0, 200);  // day 0: several segments
  append(*log, 1, 5);    // one segment only: the active one
  const size_t files_before = segment_files(0);
  ASSERT_GT(files_before, 3u);
  clock_->advance_ms(kRetention / 2);
  EXPECT_EQ(log->enforce_retention().value(), 0u) << "nothing is older than the retention yet";
  clock_->advance_ms(kRetention / 2 + 1);
  append(*log, 0, 1, 200);  // a fresh record, in the active segment (which may roll for it)
  const size_t files_now = segment_files(0);
  ASSERT_GE(files_now, files_before);
  const uint64_t deleted = log->enforce_retention().value();
  EXPECT_EQ(deleted, files_now - 1) << "every sealed segment goes; the active one stays";
  EXPECT_EQ(segment_files(0), 1u);
  EXPECT_EQ(segment_files(1), 1u) << "the active segment is never deleted, even if all its records are old";
  EXPECT_EQ(log->stats().segments_deleted, deleted);

  const uint64_t start = log->start_offset(0).value().value;
  EXPECT_GT(start, 0u);
  EXPECT_EQ(log->stats().records_deleted, start);
  EXPECT_EQ(log->start_offset(1).value().value, 0u);
  // A position below the start is a clear error, not garbage; from the start on every record is there.
  auto below = log->read(0, Offset{0}, 10, 0ms);
  ASSERT_FALSE(below.ok());
  EXPECT_EQ(below.code(), Errc::kExpiredCursor);
  EXPECT_NE(below.error().message().find("below the log start " + std::to_string(start)), std::string::npos)
      << below.error().message();
  EXPECT_EQ(log->read(0, Offset{start - 1}, 10, 0ms).code(), Errc::kExpiredCursor);
  auto kept = log->read(0, Offset{start}, 1000, 0ms).value();
  ASSERT_EQ(kept.size(), 201 - start);
  EXPECT_EQ(kept.front().offset.value, start);
  EXPECT_EQ(kept.front().value.substr(0, 6 + std::to_string(start).size()), "value-" + std::to_string(start));
  EXPECT_EQ(kept.back().offset.value, 200u);

  // A fresh instance over the same files agrees, and appends go on at the same end.
  log.reset();
  auto reopened = open().value();
  EXPECT_EQ(reopened->start_offset(0).value().value, start);
  EXPECT_EQ(reopened->end_offset(0).value().value, 201u);
  EXPECT_EQ(reopened->read(0, Offset{0}, 1, 0ms).code(), Errc::kExpiredCursor);
  EXPECT_EQ(reopened->append_sync(0, "", "next").value().value, 201u);
}

TEST_F(EmbeddedLogRetentionTest, ASegmentWithOneRecentRecordStaysAndSoDoesEverythingAfterIt) {
  auto log = open().value();
  append(*log, 0, 100);  // day 0
  clock_->advance_ms(kRetention / 2);
  append(*log, 0, 100, 100);               // half a day later
  clock_->advance_ms(kRetention / 2 + 1);  // the first 100 are past retention, the next 100 are not
  ASSERT_GT(log->enforce_retention().value(), 0u);
  const uint64_t start = log->start_offset(0).value().value;
  EXPECT_GT(start, 0u);
  EXPECT_LE(start, 100u) << "a segment holding a record within retention is kept whole";
  auto kept = log->read(0, Offset{start}, 1000, 0ms).value();
  ASSERT_EQ(kept.size(), 200 - start);
  for (size_t i = 0; i < kept.size(); ++i) ASSERT_EQ(kept[i].offset.value, start + i);
}

TEST_F(EmbeddedLogRetentionTest, AReopenedLogIsTrimmedAtOpen) {
  {
    auto log = open().value();
    append(*log, 0, 200);
    append(*log, 0, 1, 200);
  }
  clock_->advance_ms(kRetention + 1);
  auto log = open().value();
  EXPECT_GT(log->start_offset(0).value().value, 0u) << "retention ran at open";
  EXPECT_EQ(segment_files(0), 1u);
  EXPECT_GT(log->stats().segments_deleted, 0u);
}

TEST_F(EmbeddedLogRetentionTest, WithoutARetentionPeriodNothingIsDeleted) {
  auto log = open(std::nullopt).value();
  append(*log, 0, 200);
  clock_->advance_ms(365 * kDayMs);
  append(*log, 0, 1, 200);
  EXPECT_EQ(log->enforce_retention().value(), 0u);
  EXPECT_EQ(log->start_offset(0).value().value, 0u);
  EXPECT_EQ(log->read(0, Offset{0}, 1000, 0ms).value().size(), 201u);
}

}  // namespace
}  // namespace qim
