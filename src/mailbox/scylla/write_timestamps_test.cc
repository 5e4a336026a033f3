#include "mailbox/scylla/write_timestamps.h"

#include <gtest/gtest.h>

namespace qim::scylla {

TEST(WriteTimestamps, FrontierAndProofsUseTheOffset) {
  EXPECT_EQ(*monotonic_max_timestamp(Offset{42}, "frontier_offset"), 42);
}

TEST(WriteTimestamps, IdentityUsesComplementSoTheEarliestObservationWins) {
  EXPECT_EQ(*first_writer_timestamp(Offset{0}), static_cast<int64_t>(kMaxOffset));
  EXPECT_GT(*first_writer_timestamp(Offset{10}), *first_writer_timestamp(Offset{11}));
}

TEST(WriteTimestamps, RefusesTimestampsAtOrAbove2To48) {
  auto ts = checked_timestamp(uint64_t{1} << 48, "frontier_offset");
  ASSERT_FALSE(ts.ok());
  EXPECT_EQ(ts.code(), Errc::kInvariant);
  EXPECT_NE(ts.error().message().find("2^48"), std::string::npos);
  EXPECT_EQ(first_writer_timestamp(Offset{uint64_t{1} << 48}).code(), Errc::kInvalidArgument);
}

TEST(WriteTimestamps, SeqSurvivesBigintColumnsAtHighEpochs) {
  const MailboxSeq high = *compose(Epoch{kMaxEpoch}, Offset{kMaxOffset});
  EXPECT_LT(seq_to_bigint(high), 0);
  EXPECT_EQ(seq_from_bigint(seq_to_bigint(high)), high);
}

}  // namespace qim::scylla
