#include "outbox/repeated_sends.h"

#include <gtest/gtest.h>

#include "log/testing/temp_dir.h"
#include "log/testing/test_log.h"

namespace qim {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000;

OutboxRecord send(const std::string& from, const std::string& to, const std::string& cmid,
                  const std::string& body, int64_t at = kT0) {
  OutboxRecord r;
  r.sender = UserId::parse(from).value();
  r.conversation = direct_conversation(r.sender, UserId::parse(to).value()).value();
  r.client_msg_id = cmid;
  r.server_time_ms = at;
  r.body = body;
  return r;
}

TEST(RepeatedSends, TheSameSendAgainWithinTheWindowIsARepeat) {
  RepeatedSends seen(RepeatWindow{100, 60'000});
  EXPECT_FALSE(seen.check_and_add(Offset{0}, send("alice", "bob", "c1", "hi")));
  EXPECT_FALSE(seen.check_and_add(Offset{1}, send("alice", "bob", "c2", "hi")));     // another key
  EXPECT_FALSE(seen.check_and_add(Offset{2}, send("carol", "bob", "c1", "hi")));     // another sender
  EXPECT_FALSE(seen.check_and_add(Offset{3}, send("alice", "bob", "c1", "other")));  // other content
  EXPECT_FALSE(seen.check_and_add(Offset{4}, send("alice", "dave", "c1", "hi")));    // other conversation
  EXPECT_TRUE(seen.check_and_add(Offset{5}, send("alice", "bob", "c1", "hi", kT0 + 5'000)));
  EXPECT_TRUE(seen.check_and_add(Offset{6}, send("alice", "bob", "c1", "other", kT0 + 9'000)));
  // Older than the window (by server time): a new message, as the gateway's table treats it.
  EXPECT_FALSE(seen.check_and_add(Offset{7}, send("alice", "dave", "c1", "hi", kT0 + 60'001)));
}

TEST(RepeatedSends, NoClientMsgIdIsNeverARepeat) {
  RepeatedSends seen(RepeatWindow{100, 60'000});
  EXPECT_FALSE(seen.check_and_add(Offset{0}, send("alice", "bob", "", "hi")));
  EXPECT_FALSE(seen.check_and_add(Offset{1}, send("alice", "bob", "", "hi")));
}

TEST(RepeatedSends, TheWindowLooksBackABoundedNumberOfRecords) {
  RepeatedSends seen(RepeatWindow{3, 60'000});
  EXPECT_FALSE(seen.check_and_add(Offset{10}, send("alice", "bob", "c1", "hi")));
  EXPECT_TRUE(seen.check_and_add(Offset{13}, send("alice", "bob", "c1", "hi")));   // 10 is in [10, 13)
  EXPECT_FALSE(seen.check_and_add(Offset{17}, send("alice", "bob", "c1", "hi")));  // 13 is not in [14, 17)
  EXPECT_LE(seen.size(), 3u);
}

// Fanout and the archiver decide on log content alone: a consumer that starts anywhere (a restart, a
// replay, a batch handed over again) finds the same repeats as one that read from the beginning.
TEST(OutboxRepeatFilter, DecidesTheSameWhereverReadingStarts) {
  testing::TempDir dir;
  auto log = testing::open_test_log(dir.sub("outbox"), 1, "outbox");
  const std::vector<OutboxRecord> records = {
      send("alice", "bob", "a", "one"),          send("bob", "alice", "b", "two"),
      send("alice", "bob", "a", "one", kT0 + 1), send("carol", "bob", "c", "three"),
      send("bob", "alice", "b", "two", kT0 + 2), send("alice", "bob", "a", "one", kT0 + 3),
  };
  for (const auto& r : records) ASSERT_TRUE(log->append_sync(0, "", encode_outbox_record(r)).ok());
  ASSERT_TRUE(log->append_sync(0, "", "not an outbox record").ok());
  const std::vector<bool> expected = {false, false, true, false, true, true};
  for (uint64_t start = 0; start < records.size(); ++start) {
    OutboxRepeatFilter filter(*log, RepeatWindow{100, 60'000});
    for (uint64_t o = start; o < records.size(); ++o) {
      auto repeat = filter.is_repeat(0, Offset{o}, &records[o]);
      ASSERT_TRUE(repeat.ok()) << repeat.error().to_string();
      EXPECT_EQ(*repeat, expected[o]) << "offset " << o << " read from " << start;
    }
    EXPECT_FALSE(*filter.is_repeat(0, Offset{records.size()}, nullptr));  // the undecodable record
  }
  OutboxRepeatFilter filter(*log, RepeatWindow{100, 60'000});
  EXPECT_EQ(filter.is_repeat(1, Offset{0}, &records[0]).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace qim
