#include "push/push_registry.h"

#include <gtest/gtest.h>

#include "auth/base64url.h"
#include "core/clock.h"
#include "inbox/memory/memory_inbox.h"
#include "push/web_push_crypto.h"

namespace qim {
namespace {

std::string subscription(const std::string& endpoint = "https://push.example.net/sub/1") {
  auto key = P256Key::generate().value();
  return R"({"endpoint":")" + endpoint + R"(","keys":{"p256dh":")" + base64url_encode(key.public_raw()) +
         R"(","auth":")" + base64url_encode(std::string(16, 'a')) + R"("}})";
}

class PushRegistryTest : public ::testing::Test {
 protected:
  PushRegistryTest() {
    BackendContext ctx;
    ctx.clock = std::make_shared<ManualClock>(1'700'000'000'000);
    backend_ = make_memory_inbox(ctx);
  }
  std::unique_ptr<InboxBackend> backend_;
  UserId bob_ = UserId::parse("bob").value();
};

TEST(PushTargetTest, ChecksEachProvidersTokenForm) {
  EXPECT_EQ(parse_push_provider("webpush"), PushProvider::kWebPush);
  EXPECT_EQ(parse_push_provider("apns"), PushProvider::kApns);
  EXPECT_EQ(parse_push_provider("fcm"), PushProvider::kFcm);
  EXPECT_FALSE(parse_push_provider("gcm"));
  EXPECT_TRUE(check_push_token(PushProvider::kWebPush, subscription()).ok());
  EXPECT_FALSE(check_push_token(PushProvider::kWebPush, "not json").ok());
  EXPECT_FALSE(
      check_push_token(PushProvider::kWebPush, R"({"endpoint":"ftp://x","keys":{"p256dh":"","auth":""}})")
          .ok());
  // p256dh must be a 65-byte uncompressed point, auth 16 bytes.
  EXPECT_FALSE(check_push_token(
                   PushProvider::kWebPush,
                   R"({"endpoint":"https://x/","keys":{"p256dh":"AAAA","auth":"YWFhYWFhYWFhYWFhYWFhYQ"}})")
                   .ok());
  EXPECT_TRUE(check_push_token(PushProvider::kApns, std::string(64, 'a')).ok());
  EXPECT_FALSE(check_push_token(PushProvider::kApns, std::string(64, 'z')).ok());
  EXPECT_FALSE(check_push_token(PushProvider::kApns, "abcd").ok());
  EXPECT_TRUE(check_push_token(PushProvider::kFcm, "fcm-token:APA91b").ok());
  EXPECT_FALSE(check_push_token(PushProvider::kFcm, "").ok());
  EXPECT_FALSE(check_push_token(PushProvider::kFcm, "a b").ok());
}

TEST_F(PushRegistryTest, RegistersListsAndUnregistersByLastWriter) {
  PushRegistry r(*backend_);
  const auto d1 = DeviceId::parse("d1").value();
  const std::string token = subscription();
  ASSERT_TRUE(r.register_device(bob_, d1, PushProvider::kWebPush, token, 1000).ok());
  auto devices = r.devices(bob_).value();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices.at(d1), (PushTarget{PushProvider::kWebPush, token, 1000}));
  // An older write (a late retry) does not undo the registration.
  ASSERT_TRUE(r.unregister_device(bob_, d1, 999).ok());
  EXPECT_EQ(r.devices(bob_).value().size(), 1u);
  ASSERT_TRUE(r.unregister_device(bob_, d1, 1001).ok());
  EXPECT_TRUE(r.devices(bob_).value().empty());
}

TEST_F(PushRegistryTest, RefusesBadTokensAndTooManyDevices) {
  PushRegistry r(*backend_);
  EXPECT_EQ(
      r.register_device(bob_, DeviceId::parse("d").value(), PushProvider::kApns, "xyz", 1).error().code(),
      Errc::kInvalidArgument);
  for (size_t i = 0; i < kMaxPushDevices; ++i)
    ASSERT_TRUE(r.register_device(bob_, DeviceId::parse("d" + std::to_string(i)).value(), PushProvider::kFcm,
                                  "t", 10 + static_cast<int64_t>(i))
                    .ok());
  auto over = r.register_device(bob_, DeviceId::parse("extra").value(), PushProvider::kFcm, "t", 100);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code(), Errc::kResourceExhausted);
  // A registered device may register again (a new token) at the bound.
  EXPECT_TRUE(r.register_device(bob_, DeviceId::parse("d0").value(), PushProvider::kFcm, "t2", 101).ok());
}

TEST_F(PushRegistryTest, ARejectedTokenLosesToALaterRegistration) {
  PushRegistry r(*backend_);
  const auto d1 = DeviceId::parse("d1").value();
  ASSERT_TRUE(r.register_device(bob_, d1, PushProvider::kFcm, "old", 1000).ok());
  const PushTarget old = r.devices(bob_).value().at(d1);
  ASSERT_TRUE(r.register_device(bob_, d1, PushProvider::kFcm, "new", 2000).ok());
  ASSERT_TRUE(r.drop_rejected(bob_, d1, old).ok());  // the provider's answer about the old token, late
  EXPECT_EQ(r.devices(bob_).value().at(d1).token, "new");
  ASSERT_TRUE(r.drop_rejected(bob_, d1, r.devices(bob_).value().at(d1)).ok());
  EXPECT_TRUE(r.devices(bob_).value().empty());
}

TEST_F(PushRegistryTest, ThePublishedDoorIsReadBackAndOffByDefault) {
  EXPECT_EQ(read_push_door(*backend_).value(), PushDoor{});
  const PushDoor door{{PushProvider::kWebPush, PushProvider::kFcm}, "BKey"};
  ASSERT_TRUE(publish_push_door(*backend_, door, 10).ok());
  EXPECT_EQ(read_push_door(*backend_).value(), door);
  ASSERT_TRUE(publish_push_door(*backend_, PushDoor{}, 11).ok());  // push turned off
  EXPECT_EQ(read_push_door(*backend_).value(), PushDoor{});
  // A user named "config" has a registry of their own.
  EXPECT_TRUE(PushRegistry(*backend_).devices(UserId::parse("config").value()).value().empty());
}

}  // namespace
}  // namespace qim
