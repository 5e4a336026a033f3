// The user registry's cells contract (users/user_registry.h) on every backend: memory, RocksDB (`qim up`)
// and the routing Redis (the distributed deployment; QIM_TEST_ROUTING_REDIS, skipped when unset). Two
// registries over one set of cells stand for two gateways: each follows the other's writes by refresh().
#include <gtest/gtest.h>

#include "delivery/redis/routing_test_env.h"
#include "log/testing/temp_dir.h"
#include "mailbox/redis/redis_test_env.h"
#include "users/redis/redis_user_cells.h"
#include "users/user_registry.h"

namespace qim {
namespace {

UserId user(const char* name) {
  return *UserId::parse(name);
}

std::string value(const char* id, const char* name, int64_t stamp, bool deleted = false) {
  return encode_user_record(UserRecord{user(id), name, "", stamp, deleted});
}

class UserCellsContract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string& backend = GetParam();
    if (backend == "memory") {
      memory_ = make_memory_user_cells();
    } else if (backend == "rocks") {
      dir_ = std::make_unique<testing::TempDir>();
    } else {
      auto endpoints = testing::test_routing_endpoints();
      if (endpoints.empty()) GTEST_SKIP() << testing::kTestRoutingRedisSkipMessage;
      options_.endpoints = endpoints;
      options_.key_prefix = unique_test_prefix("users");
    }
  }
  // A handle on the test's cells; each call is another process's (another gateway's) view of the same
  // cells, but for RocksDB, which one process owns (a second open of the directory fails).
  std::unique_ptr<UserCells> cells() {
    if (memory_) return share_user_cells(*memory_);
    if (dir_) return open_rocks_user_cells(dir_->sub("users")).value();
    auto c = RedisUserCells::create(options_);
    EXPECT_TRUE(c.ok()) << c.error().to_string();
    return std::move(c).value();
  }
  bool shared() const { return GetParam() != "rocks"; }

  std::unique_ptr<UserCells> memory_;
  std::unique_ptr<testing::TempDir> dir_;
  RoutingOptions options_;
};

TEST_P(UserCellsContract, ACellIsReplacedOnlyByALaterStamp) {
  auto c = cells();
  EXPECT_TRUE(c->put("u/alice", 20, value("alice", "twenty", 20)).value());
  EXPECT_FALSE(c->put("u/alice", 10, value("alice", "ten", 10)).value()) << "an older write loses";
  EXPECT_FALSE(c->put("u/alice", 20, value("alice", "again", 20)).value()) << "an equal stamp loses";
  EXPECT_TRUE(c->put("u/bob", 5, value("bob", "bob", 5)).value());
  EXPECT_TRUE(c->put("u/alice", 30, value("alice", "thirty", 30, true)).value());
  auto all = c->changed_since(0);
  ASSERT_TRUE(all.ok()) << all.error().to_string();
  EXPECT_TRUE(all->everything);
  std::map<std::string, UserRecord> got;
  for (const auto& v : all->values) {
    auto r = decode_user_record(v);
    ASSERT_TRUE(r.ok());
    got[r->id.str()] = *r;
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got["alice"].updated_ms, 30);
  EXPECT_TRUE(got["alice"].deleted);
  EXPECT_EQ(got["bob"].display_name, "bob");
}

TEST_P(UserCellsContract, ChangesAfterACursorAreTheCellsWrittenSince) {
  if (!shared()) GTEST_SKIP() << "one process owns a RocksDB directory: nothing to follow";
  auto writer = cells();
  auto reader = cells();
  ASSERT_TRUE(writer->put("u/alice", 1, value("alice", "a", 1)).value());
  auto start = reader->changed_since(0);
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(start->values.size(), 1u);
  auto none = reader->changed_since(start->cursor);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->everything);
  EXPECT_TRUE(none->values.empty());
  ASSERT_TRUE(writer->put("u/bob", 1, value("bob", "b", 1)).value());
  ASSERT_TRUE(writer->put("u/bob", 2, value("bob", "b2", 2)).value());
  ASSERT_FALSE(writer->put("u/alice", 1, value("alice", "lost", 1)).value());  // not written: not a change
  auto since = reader->changed_since(start->cursor);
  ASSERT_TRUE(since.ok());
  EXPECT_FALSE(since->everything);
  ASSERT_EQ(since->values.size(), 1u) << "bob once, at its last write";
  EXPECT_EQ(decode_user_record(since->values[0])->display_name, "b2");
  EXPECT_GT(since->cursor, start->cursor);
  // A cursor the cells never gave (they restarted empty and counted again): every cell.
  auto ahead = reader->changed_since(since->cursor + 1000);
  ASSERT_TRUE(ahead.ok());
  EXPECT_TRUE(ahead->everything);
  EXPECT_EQ(ahead->values.size(), 2u);
}

TEST_P(UserCellsContract, TwoRegistriesFollowEachOtherAndConvergeOnTheLaterWrite) {
  if (!shared()) GTEST_SKIP() << "one process owns a RocksDB directory: one registry";
  auto clock_a = std::make_shared<ManualClock>(1'000);
  auto clock_b = std::make_shared<ManualClock>(1'000);
  auto a = UserRegistry::open(cells(), clock_a).value();
  auto b = UserRegistry::open(cells(), clock_b).value();
  ASSERT_EQ(a->create(user("alice"), "Alice", "").value().refusal, UserRegistry::Refusal::kNone);
  EXPECT_FALSE(b->exists(user("alice"))) << "not before b refreshes";
  ASSERT_TRUE(b->refresh().ok());
  ASSERT_TRUE(b->exists(user("alice")));
  EXPECT_EQ(b->get(user("alice"))->display_name, "Alice");
  EXPECT_EQ(b->create(user("ALICE"), "", "").value().refusal, UserRegistry::Refusal::kLookAlike);

  // A race: b renames later (stamp 3,000) but its write lands first; a's earlier rename (2,000) loses in
  // the cells, and a's view takes b's at its next refresh.
  clock_b->set_ms(3'000);
  ASSERT_TRUE(b->update(user("alice"), std::string("by b"), std::nullopt).ok());
  clock_a->set_ms(2'000);
  ASSERT_TRUE(a->update(user("alice"), std::string("by a"), std::nullopt).ok());
  ASSERT_TRUE(a->refresh().ok());
  ASSERT_TRUE(b->refresh().ok());
  EXPECT_EQ(a->get(user("alice"))->display_name, "by b");
  EXPECT_EQ(b->get(user("alice"))->display_name, "by b");

  // A deletion through b reaches a; an older write can no longer bring the user back.
  clock_b->set_ms(4'000);
  ASSERT_EQ(b->remove(user("alice")).value().refusal, UserRegistry::Refusal::kNone);
  ASSERT_TRUE(a->refresh().ok());
  EXPECT_FALSE(a->exists(user("alice")));
  EXPECT_EQ(a->update(user("alice"), std::string("x"), std::nullopt).value().refusal,
            UserRegistry::Refusal::kNotFound);
  // Created again through a (its clock behind b's deletion): the new record still supersedes the tombstone.
  ASSERT_EQ(a->create(user("alice"), "Alice again", "").value().refusal, UserRegistry::Refusal::kNone);
  ASSERT_TRUE(b->refresh().ok());
  ASSERT_TRUE(b->exists(user("alice")));
  EXPECT_EQ(b->get(user("alice"))->display_name, "Alice again");
  // A registry opened afterwards (a gateway starting) loads the same view.
  auto c = UserRegistry::open(cells(), clock_a).value();
  EXPECT_EQ(c->get(user("alice"))->display_name, "Alice again");
  EXPECT_EQ(c->list("", 10).size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Backends, UserCellsContract, ::testing::Values("memory", "rocks", "redis"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace qim
