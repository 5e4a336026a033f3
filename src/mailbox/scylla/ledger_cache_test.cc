#include "mailbox/scylla/ledger_cache.h"

#include <gtest/gtest.h>

namespace qim::scylla {

TEST(LedgerCache, RemembersRegistrationsPerUserAndDay) {
  LedgerCache cache;
  const UserId alice = *UserId::parse("alice");
  EXPECT_FALSE(cache.contains(alice, DayBucket{10}));
  cache.insert(alice, DayBucket{10});
  EXPECT_TRUE(cache.contains(alice, DayBucket{10}));
  EXPECT_FALSE(cache.contains(alice, DayBucket{11}));
  EXPECT_FALSE(cache.contains(*UserId::parse("bob"), DayBucket{10}));
}

TEST(LedgerCache, EntriesNeverOutliveTheirBucket) {
  LedgerCache cache;
  const UserId alice = *UserId::parse("alice");
  cache.insert(alice, DayBucket{10});
  cache.insert(alice, DayBucket{12});
  cache.forget_before(DayBucket{11});
  EXPECT_FALSE(cache.contains(alice, DayBucket{10}));
  EXPECT_TRUE(cache.contains(alice, DayBucket{12}));
}

TEST(LedgerCache, IsBounded) {
  LedgerCache cache(2);
  for (int i = 0; i < 5; ++i) cache.insert(*UserId::parse("u" + std::to_string(i)), DayBucket{1});
  int held = 0;
  for (int i = 0; i < 5; ++i) held += cache.contains(*UserId::parse("u" + std::to_string(i)), DayBucket{1});
  EXPECT_LE(held, 2);
}

}  // namespace qim::scylla
