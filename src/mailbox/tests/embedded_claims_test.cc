// The embedded backend's identity claims and entry writes from many threads at once (decision 41: its
// locks are striped by shard, and a page's claims are one RocksDB batch): first writer wins per identity
// whatever the interleaving, and every claim and ledger registration is there for a fresh reader (the
// directory reopened) afterwards.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "mailbox/embedded/embedded_backend.h"
#include "mailbox/store_options.h"
#include "mailbox/tests/contract_helpers.h"

namespace qim::test {
namespace {

constexpr int64_t kStartMs = 20'000 * kDayMs;
constexpr Epoch kEpoch{3};
constexpr uint32_t kShards = 4;
constexpr int kIdsPerShard = 40;
constexpr int kThreadsPerShard = 3;

class EmbeddedClaimsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "qim-embedded-claims-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    context_.shards = *ShardMap::create(kShards);
    context_.clock = std::make_shared<ManualClock>(kStartMs);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::unique_ptr<StoreBackend> open() {
    auto backend = open_embedded_backend(context_, root_ + "/mailbox");
    EXPECT_TRUE(is_ok(backend));
    return backend.ok() ? std::move(backend).value() : nullptr;
  }
  static DispatchIdentity identity(uint32_t shard, int n) {
    const Message m = make_message(1000 * shard + n, UserId::unchecked("sender"), kStartMs);
    return make_record("s" + std::to_string(shard) + "-d" + std::to_string(n), m, {{m.sender}}).identity;
  }
  // The observed offset that thread `t` claims with, so the stored one names the winner.
  static Offset observed_by(int t, int n) { return Offset{static_cast<uint64_t>(1000 * (t + 1) + n)}; }

  std::string root_;
  BackendContext context_;
};

TEST_F(EmbeddedClaimsTest, ConcurrentClaimsOfOneIdentityHaveOneWinnerThatAFreshReaderSees) {
  std::vector<std::vector<std::atomic<int>>> wins(kShards);
  std::vector<std::vector<std::atomic<int>>> winner(kShards);
  for (uint32_t s = 0; s < kShards; ++s) {
    wins[s] = std::vector<std::atomic<int>>(kIdsPerShard);
    winner[s] = std::vector<std::atomic<int>>(kIdsPerShard);
  }
  std::atomic<int> errors{0};
  {
    auto backend = open();
    ASSERT_NE(backend, nullptr);
    std::vector<std::thread> threads;
    for (uint32_t s = 0; s < kShards; ++s) {
      for (int t = 0; t < kThreadsPerShard; ++t) {
        threads.emplace_back([&, s, t] {
          // Thread 0 claims one by one, the others in pages of 8 in opposite orders, so claims of one
          // identity race both within a page's batch and against single claims.
          std::vector<DispatchIdentity> ids;
          for (int n = 0; n < kIdsPerShard; ++n)
            ids.push_back(identity(s, t == 2 ? kIdsPerShard - 1 - n : n));
          for (int from = 0; from < kIdsPerShard; from += 8) {
            std::vector<IdentityClaim> page;
            for (int n = from; n < from + 8; ++n) {
              const int id_n = t == 2 ? kIdsPerShard - 1 - n : n;
              page.push_back(IdentityClaim{&ids[n], observed_by(t, id_n)});
            }
            std::vector<ClaimAnswer> answers;
            if (t == 0) {
              for (const auto& c : page)
                answers.push_back(ClaimAnswer{
                    backend->claim_identity(ShardId{s}, kEpoch, *c.identity, c.observed), nullptr});
            } else {
              answers = backend->claim_identities(ShardId{s}, kEpoch, page);
            }
            for (size_t i = 0; i < answers.size(); ++i) {
              const int id_n =
                  t == 2 ? kIdsPerShard - 1 - (from + static_cast<int>(i)) : from + static_cast<int>(i);
              if (!answers[i].stored.ok()) {
                errors++;
              } else if (!answers[i].stored->has_value()) {
                wins[s][id_n]++;
                winner[s][id_n] = t;
              }
            }
          }
        });
      }
    }
    for (auto& th : threads) th.join();
  }
  EXPECT_EQ(errors.load(), 0);
  auto fresh = open();  // the directory reopened: nothing is served from the writer's memory
  ASSERT_NE(fresh, nullptr);
  for (uint32_t s = 0; s < kShards; ++s) {
    for (int n = 0; n < kIdsPerShard; ++n) {
      ASSERT_EQ(wins[s][n].load(), 1) << "shard " << s << " identity " << n << ": one claim stores it";
      auto stored = fresh->read_identity(ShardId{s}, kEpoch, identity(s, n).id);
      ASSERT_TRUE(is_ok(stored));
      ASSERT_TRUE(stored->has_value()) << "shard " << s << " identity " << n;
      EXPECT_EQ((*stored)->canonical_offset, observed_by(winner[s][n].load(), n))
          << "the winner's offset, shard " << s << " identity " << n;
      EXPECT_EQ((*stored)->identity, identity(s, n));
    }
  }
}

TEST_F(EmbeddedClaimsTest, ConcurrentEntryWritesOfManyShardsRegisterEveryBucket) {
  constexpr int kUsersPerShard = 12;
  constexpr int kDays = 3;
  std::atomic<int> errors{0};
  {
    auto backend = open();
    ASSERT_NE(backend, nullptr);
    std::vector<std::thread> threads;
    for (uint32_t s = 0; s < kShards; ++s) {
      threads.emplace_back([&, s] {
        for (int day = 0; day < kDays; ++day) {
          for (int u = 0; u < kUsersPerShard; ++u) {
            const UserId user = user_in_shard(context_.shards, ShardId{s}, u);
            const Message m = make_message(100 * day + u, user, kStartMs + day * kDayMs);
            const std::vector<MailboxEntry> entries = {{user, seq_of(3, 100 * day + u + 1), m}};
            if (!backend->write_entries(ShardId{s}, kEpoch, entries).ok()) errors++;
          }
        }
      });
    }
    for (auto& th : threads) th.join();
  }
  EXPECT_EQ(errors.load(), 0);
  auto fresh = open();
  ASSERT_NE(fresh, nullptr);
  for (uint32_t s = 0; s < kShards; ++s) {
    for (int u = 0; u < kUsersPerShard; ++u) {
      const UserId user = user_in_shard(context_.shards, ShardId{s}, u);
      auto ledger = fresh->read_ledger(user);
      ASSERT_TRUE(is_ok(ledger));
      std::vector<DayBucket> want;
      for (int day = 0; day < kDays; ++day) want.push_back(day_bucket_of(kStartMs + day * kDayMs));
      EXPECT_EQ(ledger->live_buckets, want) << user.str();
    }
  }
}

}  // namespace
}  // namespace qim::test
