#include "core/mailbox_seq.h"

#include <gtest/gtest.h>

namespace qim {

TEST(MailboxSeq, ComposeRoundTrips) {
  auto seq = compose(Epoch{7}, Offset{123456});
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ(seq->epoch(), Epoch{7});
  EXPECT_EQ(seq->offset(), Offset{123456});
  EXPECT_EQ(seq->raw(), (uint64_t{7} << 48) | 123456);
}

TEST(MailboxSeq, EpochSortsBeforeOffset) {
  EXPECT_LT(*compose(Epoch{1}, Offset{kMaxOffset}), *compose(Epoch{2}, Offset{0}));
}

TEST(MailboxSeq, RefusesOffsetAtOrAbove2To48) {
  auto seq = compose(Epoch{1}, Offset{uint64_t{1} << 48});
  ASSERT_FALSE(seq.ok());
  EXPECT_EQ(seq.code(), Errc::kInvalidArgument);
  EXPECT_NE(seq.error().message().find("2^48"), std::string::npos);
  EXPECT_TRUE(compose(Epoch{1}, Offset{kMaxOffset}).ok());
}

TEST(MailboxSeq, RefusesEpochAtOrAbove2To16) {
  EXPECT_EQ(compose(Epoch{1u << 16}, Offset{1}).code(), Errc::kInvalidArgument);
  EXPECT_TRUE(compose(Epoch{kMaxEpoch}, Offset{1}).ok());
}

}  // namespace qim
