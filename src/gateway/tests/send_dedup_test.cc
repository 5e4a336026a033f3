#include "gateway/send_dedup.h"

#include <gtest/gtest.h>

namespace qim {
namespace {

SentMessage sent(uint64_t id, int64_t time) {
  return SentMessage{MessageId{id}, *ConversationId::parse("d:a:b"), time, 42};
}

TEST(SendDedup, RecordedOnlyWhenTheFirstCompletes) {
  MemorySendDedup d(10, 1000);
  auto key = SendDedup::key_of(*UserId::parse("a"), "c1");
  EXPECT_EQ(d.begin(key, 0, nullptr).kind, SendDedup::Kind::kFirst);
  EXPECT_EQ(d.size(), 0u);
  int waited = 0;
  EXPECT_EQ(d.begin(key, 0,
                    [&](const Result<SentMessage>& r) {
                      ASSERT_TRUE(r.ok());
                      EXPECT_EQ(r->id.value, 7u);
                      ++waited;
                    })
                .kind,
            SendDedup::Kind::kWaiting);
  d.complete(key, sent(7, 0));
  EXPECT_EQ(waited, 1);
  auto again = d.begin(key, 10, nullptr);
  EXPECT_EQ(again.kind, SendDedup::Kind::kDone);
  EXPECT_EQ(again.sent->id.value, 7u);
}

TEST(SendDedup, AFailedFirstFreesTheKeyAndTellsTheWaiters) {
  MemorySendDedup d(10, 1000);
  auto key = SendDedup::key_of(*UserId::parse("a"), "c1");
  ASSERT_EQ(d.begin(key, 0, nullptr).kind, SendDedup::Kind::kFirst);
  bool told = false;
  d.begin(key, 0, [&](const Result<SentMessage>& r) { told = !r.ok() && r.code() == Errc::kIo; });
  d.complete(key, Error(Errc::kIo, "disk full"));
  EXPECT_TRUE(told);
  EXPECT_EQ(d.begin(key, 0, nullptr).kind, SendDedup::Kind::kFirst);
}

TEST(SendDedup, BoundedByCountAndWindow) {
  MemorySendDedup d(2, 100);
  UserId a = *UserId::parse("a");
  for (uint64_t i = 0; i < 3; ++i) d.record(SendDedup::key_of(a, std::to_string(i)), sent(i, 0));
  EXPECT_EQ(d.size(), 2u);
  EXPECT_EQ(d.begin(SendDedup::key_of(a, "0"), 0, nullptr).kind, SendDedup::Kind::kFirst);  // evicted
  EXPECT_EQ(d.begin(SendDedup::key_of(a, "2"), 100, nullptr).kind, SendDedup::Kind::kDone);
  EXPECT_EQ(d.begin(SendDedup::key_of(a, "2"), 101, nullptr).kind, SendDedup::Kind::kFirst);  // window passed
}

TEST(SendDedup, KeysOfDifferentUsersDoNotCollide) {
  EXPECT_NE(SendDedup::key_of(*UserId::parse("a"), "bc"), SendDedup::key_of(*UserId::parse("ab"), "c"));
  EXPECT_NE(send_fingerprint(*ConversationId::parse("d:a:b"), "x"),
            send_fingerprint(*ConversationId::parse("d:a:b"), "y"));
}

}  // namespace
}  // namespace qim
