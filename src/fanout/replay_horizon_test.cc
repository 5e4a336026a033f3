// A fanout replay is refused from before the Outbox retention horizon (fanout/replay_horizon.h), on a
// stopped instance (rewind_fanout) and a running one (Fanout::replay_from), with a manual clock.
#include "fanout/replay_horizon.h"

#include <gtest/gtest.h>

#include "fanout/fanout.h"
#include "log/embedded/embedded_log.h"
#include "log/testing/temp_dir.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kStartMs = 20'000 * kDayMs;
constexpr int64_t kRetention = 7 * kDayMs;

class ReplayHorizonTest : public ::testing::Test {
 protected:
  std::unique_ptr<EmbeddedLog> open(const std::string& name, uint32_t partitions,
                                    std::optional<int64_t> retention = std::nullopt) {
    EmbeddedLogOptions o;
    o.dir = dir_.sub(name);
    o.name = name;
    o.partitions = partitions;
    o.segment_bytes = 4096;
    o.clock = clock_;
    o.retention_ms = retention;
    o.retention_check_interval = 3600s;
    return EmbeddedLog::open(o).value();
  }
  // 10 records on day 0 (offsets 0..9), then 10 more six days later (10..19); the clock ends on day 8,
  // so the horizon (day 1) lies between them.
  void fill(EmbeddedLog& log, uint32_t partition) {
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(log.append_sync(partition, "", "old" + std::to_string(i)).ok());
    clock_->advance_ms(6 * kDayMs);
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(log.append_sync(partition, "", "new" + std::to_string(i)).ok());
    clock_->advance_ms(2 * kDayMs);
  }
  ReplayLimit limit() const { return ReplayLimit{clock_->now_ms(), kRetention}; }

  testing::TempDir dir_;
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>(kStartMs);
};

TEST_F(ReplayHorizonTest, RefusedBeforeTheHorizonWithTheEarliestReplayableOffset) {
  auto outbox = open("outbox", 1);
  fill(*outbox, 0);
  for (uint64_t from : {0u, 5u, 9u}) {
    Status s = check_replay_horizon(*outbox, 0, Offset{from}, limit());
    ASSERT_FALSE(s.ok()) << from;
    EXPECT_EQ(s.code(), Errc::kInvalidArgument);
    const std::string& m = s.error().message();
    EXPECT_NE(m.find("before the retention horizon 2024-10-05T00:00:00Z"), std::string::npos) << m;
    EXPECT_NE(m.find("QIM_OUTBOX_RETENTION_MS=" + std::to_string(kRetention)), std::string::npos) << m;
    EXPECT_NE(m.find("the earliest offset that may be replayed is 10"), std::string::npos) << m;
  }
  EXPECT_TRUE(check_replay_horizon(*outbox, 0, Offset{10}, limit()).ok());
  EXPECT_TRUE(check_replay_horizon(*outbox, 0, Offset{19}, limit()).ok());
  EXPECT_TRUE(check_replay_horizon(*outbox, 0, Offset{20}, limit()).ok()) << "the end: nothing to replay";
  EXPECT_EQ(check_replay_horizon(*outbox, 0, Offset{21}, limit()).code(), Errc::kInvalidArgument);
  clock_->advance_ms(7 * kDayMs);  // now every record is older than the horizon
  Status all_old = check_replay_horizon(*outbox, 0, Offset{10}, limit());
  ASSERT_FALSE(all_old.ok());
  EXPECT_NE(all_old.error().message().find("nothing to replay"), std::string::npos)
      << all_old.error().message();
}

TEST_F(ReplayHorizonTest, BelowTheStartOfARetainedLogIsRefused) {
  auto outbox = open("outbox", 1, kRetention);
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(outbox->append_sync(0, "", std::string(60, 'x')).ok());
  clock_->advance_ms(kRetention + 1);
  ASSERT_TRUE(outbox->append_sync(0, "", "fresh").ok());
  ASSERT_GT(outbox->enforce_retention().value(), 0u);
  const uint64_t start = outbox->start_offset(0).value().value;
  Status s = check_replay_horizon(*outbox, 0, Offset{0}, limit());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Errc::kInvalidArgument);
  EXPECT_NE(s.error().message().find("records below offset " + std::to_string(start) + " were deleted"),
            std::string::npos)
      << s.error().message();
}

TEST_F(ReplayHorizonTest, RewindMovesNoPositionWhenAnyPartitionIsBeforeTheHorizon) {
  auto outbox = open("outbox", 2);
  fill(*outbox, 0);
  ASSERT_TRUE(outbox->append_sync(1, "", "recent").ok());
  ASSERT_TRUE(outbox->commit(kFanoutGroup, 0, Offset{20}).ok());
  ASSERT_TRUE(outbox->commit(kFanoutGroup, 1, Offset{1}).ok());
  auto refused = rewind_fanout(*outbox, {}, Offset{0}, kFanoutGroup, limit());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), Errc::kInvalidArgument);
  EXPECT_NE(refused.error().message().find("retention horizon"), std::string::npos);
  EXPECT_EQ(outbox->committed(kFanoutGroup, 0).value()->value, 20u) << "nothing half-written";
  EXPECT_EQ(outbox->committed(kFanoutGroup, 1).value()->value, 1u) << "nothing half-written";
  auto ok = rewind_fanout(*outbox, {}, Offset{10}, kFanoutGroup, limit());
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  EXPECT_EQ(outbox->committed(kFanoutGroup, 0).value()->value, 10u);
  EXPECT_EQ(outbox->committed(kFanoutGroup, 1).value()->value, 1u) << "capped at the partition's end";
}

TEST_F(ReplayHorizonTest, ARunningFanoutRefusesAReplayBeforeTheHorizon) {
  auto outbox = open("outbox", 1);
  auto mailbox = open("mailbox", 1);
  fill(*outbox, 0);
  FanoutOptions o;
  o.consumer.poll_wait = 10ms;
  o.outbox_retention_ms = kRetention;
  o.clock = clock_;
  Fanout f(*outbox, *mailbox, ShardMap::create(1).value(), o);
  Status s = f.replay_from(0, Offset{3});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Errc::kInvalidArgument);
  EXPECT_NE(s.error().message().find("the earliest offset that may be replayed is 10"), std::string::npos)
      << s.error().message();
  EXPECT_TRUE(f.check_replay(0, Offset{10}).ok());
}

// A SEND stored twice (a retry whose first attempt was stored unbeknown to its gateway) straddles the
// horizon: its first copy's segment is deleted by retention, the second is kept. A replay from the second
// copy would not see the first and would dispatch it again under its own id: refused.
TEST_F(ReplayHorizonTest, AReplayWhoseRepeatedSendsLookBackWasDeletedIsRefused) {
  auto outbox = open("outbox", 1, kRetention);
  auto mailbox = open("mailbox", 1);
  OutboxRecord send{ConversationId::parse("d:alice:bob").value(),
                    UserId::parse("alice").value(),
                    DeviceId::parse("d1").value(),
                    "c1",
                    clock_->now_ms(),
                    "hello",
                    std::nullopt};
  auto pad = [&](int n) {
    for (int i = 0; i < n; ++i) ASSERT_TRUE(outbox->append_sync(0, "", std::string(60, 'x')).ok());
  };
  ASSERT_EQ(outbox->append_sync(0, "", encode_outbox_record(send)).value().value, 0u);
  pad(100);  // fills segments of 4 KiB: the first copy's segment is closed
  clock_->advance_ms(10 * 60'000);
  send.server_time_ms = clock_->now_ms();  // the retry, ten minutes later
  const uint64_t second = outbox->append_sync(0, "", encode_outbox_record(send)).value().value;
  pad(100);
  clock_->advance_ms(kRetention - 5 * 60'000);  // the horizon falls between the two copies
  ASSERT_TRUE(outbox->append_sync(0, "", "fresh").ok());
  ASSERT_GT(outbox->enforce_retention().value(), 0u);
  const uint64_t start = outbox->start_offset(0).value().value;
  ASSERT_GT(start, 0u) << "the first copy's segment was deleted";
  ASSERT_LE(start, second) << "the second copy is kept";

  // The horizon alone allows it (the second copy is recent enough) ...
  EXPECT_TRUE(check_replay_horizon(*outbox, 0, Offset{second}, limit()).ok());
  // ... but the repeated-sends filter of that replay could not see the first copy.
  ReplayLimit with_repeats = limit();
  with_repeats.repeats = RepeatWindow{};
  Status s = check_replay_horizon(*outbox, 0, Offset{second}, with_repeats);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Errc::kInvalidArgument);
  EXPECT_NE(s.error().message().find("dispatched again"), std::string::npos) << s.error().message();
  // A running fanout refuses it the same way, and the stopped instance's rewind too.
  FanoutOptions o;
  o.consumer.poll_wait = 10ms;
  o.outbox_retention_ms = kRetention;
  o.clock = clock_;
  Fanout f(*outbox, *mailbox, ShardMap::create(1).value(), o);
  EXPECT_EQ(f.check_replay(0, Offset{second}).code(), Errc::kInvalidArgument);
  EXPECT_EQ(rewind_fanout(*outbox, {}, Offset{second}, kFanoutGroup, with_repeats).code(),
            Errc::kInvalidArgument);
  // A time window the kept records cover (the oldest kept is ten minutes older than the replay's first
  // record, everything deleted older still): allowed.
  with_repeats.repeats = RepeatWindow{12'500, 60'000};
  if (start < second) {
    EXPECT_TRUE(check_replay_horizon(*outbox, 0, Offset{second}, with_repeats).ok());
  }
}

}  // namespace
}  // namespace qim
