#include "users/user_registry.h"

#include <gtest/gtest.h>

#include "log/testing/temp_dir.h"

namespace qim {
namespace {

UserId user(const char* name) {
  return *UserId::parse(name);
}

TEST(UserRegistry, CreateUpdateDeleteAndTheirRefusals) {
  auto clock = std::make_shared<ManualClock>(1'000);
  auto reg = UserRegistry::open(make_memory_user_cells(), clock).value();
  auto made = reg->create(user("alice"), "Alice", "https://example.com/a.png").value();
  ASSERT_EQ(made.refusal, UserRegistry::Refusal::kNone) << made.message;
  EXPECT_TRUE(reg->exists(user("alice")));
  EXPECT_FALSE(reg->exists(user("bob")));
  EXPECT_EQ(reg->create(user("alice"), "", "").value().refusal, UserRegistry::Refusal::kExists);
  // Look-alike: the same id but for case.
  auto look = reg->create(user("ALICE"), "", "").value();
  EXPECT_EQ(look.refusal, UserRegistry::Refusal::kLookAlike);
  EXPECT_NE(look.message.find("'alice'"), std::string::npos) << look.message;
  EXPECT_EQ(reg->create(user("bob"), std::string(kMaxDisplayNameBytes + 1, 'x'), "").value().refusal,
            UserRegistry::Refusal::kTooLong);
  auto changed = reg->update(user("alice"), std::string("Alice A."), std::nullopt).value();
  ASSERT_EQ(changed.refusal, UserRegistry::Refusal::kNone);
  EXPECT_EQ(reg->get(user("alice"))->display_name, "Alice A.");
  EXPECT_EQ(reg->get(user("alice"))->avatar_url, "https://example.com/a.png");
  EXPECT_EQ(reg->update(user("bob"), std::string("B"), std::nullopt).value().refusal,
            UserRegistry::Refusal::kNotFound);
  ASSERT_EQ(reg->remove(user("alice")).value().refusal, UserRegistry::Refusal::kNone);
  EXPECT_FALSE(reg->exists(user("alice")));
  EXPECT_EQ(reg->remove(user("alice")).value().refusal, UserRegistry::Refusal::kNotFound);
  // Deleted, its id (and its look-alikes) may be created again.
  EXPECT_EQ(reg->create(user("Alice"), "", "").value().refusal, UserRegistry::Refusal::kNone);
}

TEST(UserRegistry, ListsInIdOrderAfterACursor) {
  auto reg = UserRegistry::open(make_memory_user_cells(), std::make_shared<ManualClock>(1)).value();
  for (const char* n : {"carol", "alice", "bob", "dave"}) ASSERT_TRUE(reg->create(user(n), n, "").ok());
  ASSERT_TRUE(reg->remove(user("bob")).ok());
  auto page = reg->list("", 2);
  ASSERT_EQ(page.size(), 2u);
  EXPECT_EQ(page[0].id.str(), "alice");
  EXPECT_EQ(page[1].id.str(), "carol");
  page = reg->list("carol", 10);
  ASSERT_EQ(page.size(), 1u);
  EXPECT_EQ(page[0].id.str(), "dave");
}

TEST(UserRegistry, CellsAreLastWriterWinsByStamp) {
  auto cells = make_memory_user_cells();
  UserRecord r{user("alice"), "new", "", 20, false};
  EXPECT_TRUE(cells->put("u/alice", 20, encode_user_record(r)).value());
  UserRecord older{user("alice"), "old", "", 10, false};
  EXPECT_FALSE(cells->put("u/alice", 10, encode_user_record(older)).value()) << "an older write lost";
  auto reg = UserRegistry::open(std::move(cells), std::make_shared<ManualClock>(1)).value();
  EXPECT_EQ(reg->get(user("alice"))->display_name, "new");
  // A write through the registry after a clock step back still supersedes what it wrote before.
  ASSERT_TRUE(reg->update(user("alice"), std::string("newer"), std::nullopt).ok());
  EXPECT_EQ(reg->get(user("alice"))->display_name, "newer");
  EXPECT_GT(reg->get(user("alice"))->updated_ms, 20);
}

TEST(UserRegistry, SurvivesAReopenOnDisk) {
  testing::TempDir dir;
  {
    auto reg =
        UserRegistry::open(open_rocks_user_cells(dir.sub("users")).value(), std::make_shared<ManualClock>(5))
            .value();
    ASSERT_TRUE(reg->create(user("alice"), "Alice", "").ok());
    ASSERT_TRUE(reg->create(user("bob"), "Bob", "").ok());
    ASSERT_TRUE(reg->remove(user("bob")).ok());
  }
  auto reg =
      UserRegistry::open(open_rocks_user_cells(dir.sub("users")).value(), std::make_shared<ManualClock>(6))
          .value();
  EXPECT_EQ(reg->get(user("alice"))->display_name, "Alice");
  EXPECT_FALSE(reg->exists(user("bob")));
  EXPECT_EQ(reg->create(user("ALICE"), "", "").value().refusal, UserRegistry::Refusal::kLookAlike);
}

}  // namespace
}  // namespace qim
