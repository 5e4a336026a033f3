// Session revocation through a real gateway (issue 40 item 5): a device's or a user's not_before refuses
// its older tokens at AUTH and closes their live connections (ERROR UNAUTHENTICATED, close 4001), pushed
// through the gateway's signal bus or, when the push is missed, at the watcher's next round.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "client/client.h"
#include "gateway/tests/gateway_harness.h"
#include "sessions/file_session_store.h"
#include "sessions/session_service.h"

namespace qim {
namespace {

using namespace std::chrono_literals;
using client::Client;
using client::ServerFrame;

constexpr const char* kSecret = "session-revocation-test-secret";
constexpr auto kWait = 5s;

class SessionRevocationTest : public testing::GatewayHarness {
 protected:
  SessionRevocationTest() : GatewayHarness(kSecret) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("qim-revocation-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    store_ = std::move(FileSessionStore::open(dir_.string())).value();
  }
  void TearDown() override {
    GatewayHarness::TearDown();
    std::filesystem::remove_all(dir_);
  }
  void configure(GatewayOptions& o, GatewayDeps& d) override {
    o.session_recheck_ms = recheck_ms_;
    d.sessions = store_.get();
  }
  // Revokes at a clock one millisecond past the tokens minted so far; `push`: through the gateway's bus.
  int64_t revoke(std::string_view user, std::optional<std::string> device, bool push = true) {
    clock_->advance_ms(1);
    SessionService service(*store_, push ? &gateway_->signals() : nullptr, clock_);
    auto nb = service.revoke(*UserId::parse(user),
                             device ? std::optional<DeviceId>(*DeviceId::parse(*device)) : std::nullopt);
    EXPECT_TRUE(nb.ok()) << nb.error().to_string();
    clock_->advance_ms(1);
    return nb.ok() ? *nb : 0;
  }
  // Waits (bounded) until the server closed `c`; false if it is still open.
  static bool wait_closed(Client& c) {
    auto r = c.wait_for([](const ServerFrame&) { return false; }, kWait);
    return !r.ok() && c.closed();
  }
  static void expect_revoked_close(Client& c) {
    auto e = c.wait_type("ERROR", kWait);
    ASSERT_TRUE(e.ok()) << e.error().to_string();
    EXPECT_EQ(e->code, "UNAUTHENTICATED");
    EXPECT_NE(e->message.find("session revoked"), std::string::npos) << e->message;
    ASSERT_TRUE(wait_closed(c));
    EXPECT_EQ(c.close_code(), 4001);
    EXPECT_NE(c.close_reason().find("session revoked"), std::string::npos) << c.close_reason();
  }

  std::filesystem::path dir_;
  std::unique_ptr<FileSessionStore> store_;
  int64_t recheck_ms_ = 60'000;  // the watcher stays out of the way unless a test wants it
};

TEST_F(SessionRevocationTest, RevokingADeviceClosesItsLiveConnectionAndRefusesItsTokenTheOtherDeviceStays) {
  start();
  const std::string phone_token = token("alice", "phone");
  auto phone = connect();
  ASSERT_TRUE(phone->auth(phone_token).ok());
  auto laptop = login("alice", "laptop");
  revoke("alice", "phone");
  expect_revoked_close(*phone);
  EXPECT_TRUE(laptop->sync(0).ok()) << "the other device keeps its session";
  // The same token is refused at AUTH with the documented code and close.
  auto again = connect();
  auto refused = again->auth(phone_token);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message().rfind("UNAUTHENTICATED: session revoked", 0), 0u)
      << refused.error().message();
  ASSERT_TRUE(wait_closed(*again));
  EXPECT_EQ(again->close_code(), 4001);
  // A token minted after the revocation (a new login) is accepted.
  auto fresh = connect();
  EXPECT_TRUE(fresh->auth(token("alice", "phone")).ok());
}

TEST_F(SessionRevocationTest, RevokingAUserClosesEveryDeviceAndLeavesOtherUsers) {
  start();
  auto phone = login("alice", "phone");
  auto laptop = login("alice", "laptop");
  auto bob = login("bob", "phone");
  revoke("alice", std::nullopt);
  expect_revoked_close(*phone);
  expect_revoked_close(*laptop);
  EXPECT_TRUE(bob->sync(0).ok());
  auto devices = store_->devices(*UserId::parse("alice"));
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size(), 2u);
  EXPECT_EQ((*devices)[0].live, 0u) << "closed connections are no longer live";
}

// The push is missed (no bus here): the watcher's round closes the connection.
TEST_F(SessionRevocationTest, AMissedPushIsCaughtUpByTheWatcher) {
  recheck_ms_ = 50;
  start();
  auto phone = login("alice", "phone");
  revoke("alice", "phone", /*push=*/false);
  expect_revoked_close(*phone);
}

}  // namespace
}  // namespace qim
