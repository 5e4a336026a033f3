// The embedded SessionStore (durable marks in the data directory) and the gateways' catch-up watcher.
#include "sessions/file_session_store.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sessions/revocation_watcher.h"
#include "sessions/session_service.h"

namespace qim {
namespace {

class FileSessionStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("qim-sessions-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::unique_ptr<FileSessionStore> open() {
    auto s = FileSessionStore::open(dir_.string());
    EXPECT_TRUE(s.ok()) << s.error().to_string();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  std::filesystem::path dir_;
  const UserId alice_ = *UserId::parse("alice");
  const DeviceId phone_ = *DeviceId::parse("phone");
};

TEST_F(FileSessionStoreTest, RevocationsSurviveAReopen) {
  {
    auto store = open();
    ASSERT_TRUE(store->revoke(alice_, phone_, 1'000).ok());
    ASSERT_TRUE(store->revoke(alice_, std::nullopt, 500).ok());
    ASSERT_TRUE(store->revoke(alice_, phone_, 900).ok());  // never lowers
  }
  auto store = open();
  auto m = store->marks(alice_);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->not_before(phone_), 1'000);
  EXPECT_EQ(m->user_not_before_ms, 500);
  EXPECT_TRUE(store->marks(*UserId::parse("bob"))->empty());
}

TEST_F(FileSessionStoreTest, ATornLastLineIsIgnoredAndABadLineRefused) {
  { open()->revoke(alice_, phone_, 1'000).ok(); }
  {
    std::ofstream out(dir_ / "sessions" / "revocations", std::ios::app);
    out << "alice * 99";  // no newline: never acknowledged
  }
  EXPECT_EQ(open()->marks(alice_)->user_not_before_ms, 0);
  {
    std::ofstream out(dir_ / "sessions" / "revocations", std::ios::trunc);
    out << "al:ice * 99\n";
  }
  auto bad = FileSessionStore::open(dir_.string());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), Errc::kCorruptEntry);
}

TEST_F(FileSessionStoreTest, DevicesShowLastAuthLiveConnectionsAndNotBefore) {
  auto store = open();
  store->connection_opened(alice_, phone_, 10);
  store->connection_opened(alice_, phone_, 20);
  store->connection_opened(alice_, *DeviceId::parse("laptop"), 30);
  store->connection_closed(alice_, phone_);
  ASSERT_TRUE(store->revoke(alice_, *DeviceId::parse("tablet"), 40).ok());
  auto devices = store->devices(alice_);
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size(), 3u);
  EXPECT_EQ((*devices)[0].device, "laptop");
  EXPECT_EQ((*devices)[0].live, 1u);
  EXPECT_EQ((*devices)[1].device, "phone");
  EXPECT_EQ((*devices)[1].last_auth_ms, 20);
  EXPECT_EQ((*devices)[1].live, 1u);
  EXPECT_EQ((*devices)[2].device, "tablet");
  EXPECT_EQ((*devices)[2].not_before_ms, 40);
  EXPECT_EQ((*devices)[2].last_auth_ms, 0);
}

TEST_F(FileSessionStoreTest, TheServiceRecordsNowAndPushesOneSignalToTheUser) {
  struct Bus final : SignalBus {
    void send(std::span<const UserId> users, std::string frame, uint64_t) override {
      sent.emplace_back(users.front().str(), std::move(frame));
    }
    std::vector<std::pair<std::string, std::string>> sent;
  } bus;
  auto store = open();
  SessionService service(*store, &bus, std::make_shared<ManualClock>(5'000));
  auto nb = service.revoke(alice_, phone_);
  ASSERT_TRUE(nb.ok());
  EXPECT_EQ(*nb, 5'000);
  EXPECT_EQ(store->marks(alice_)->not_before(phone_), 5'000);
  ASSERT_EQ(bus.sent.size(), 1u);
  EXPECT_EQ(bus.sent[0].first, "alice");
  auto s = decode_revocation_signal(bus.sent[0].second);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->marks.not_before(phone_), 5'000);
}

// A gateway that missed the push catches up at its next round: the users revoked since its cursor, and
// every live user when changes were forgotten.
TEST_F(FileSessionStoreTest, TheWatcherHandsOnTheUsersRevokedSinceItsLastRound) {
  auto store = open();
  ASSERT_TRUE(store->revoke(*UserId::parse("old"), std::nullopt, 1).ok());  // before the watcher started
  std::vector<std::string> applied;
  RevocationWatcher watcher(
      *store, [&](const UserId& u, const RevocationMarks&) { applied.push_back(u.str()); },
      [] { return std::vector<UserId>{*UserId::parse("live")}; }, std::chrono::hours(1));
  watcher.start();  // takes the cursor; its own rounds are an hour apart
  ASSERT_TRUE(watcher.round().ok());
  EXPECT_TRUE(applied.empty());
  ASSERT_TRUE(store->revoke(alice_, phone_, 10).ok());
  ASSERT_TRUE(watcher.round().ok());
  EXPECT_EQ(applied, std::vector<std::string>{"alice"});
  ASSERT_TRUE(watcher.round().ok());
  EXPECT_EQ(applied.size(), 1u) << "each change once";
  watcher.stop();
}

}  // namespace
}  // namespace qim
