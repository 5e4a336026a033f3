// The revocation rule (issue 40 item 5): issued-at against not_before, per device and per user.
#include "sessions/revocation.h"

#include <gtest/gtest.h>

namespace qim {
namespace {

DeviceId dev(const char* d) {
  return *DeviceId::parse(d);
}

TEST(Revocation, NothingRevokedWithoutMarks) {
  RevocationMarks m;
  EXPECT_TRUE(m.empty());
  EXPECT_FALSE(is_revoked(m, dev("phone"), 0));
  EXPECT_FALSE(is_revoked(m, dev("phone"), 1'000));
}

TEST(Revocation, ADeviceMarkRevokesThatDeviceOnlyAndOnlyTokensIssuedBeforeIt) {
  RevocationMarks m;
  m.raise(dev("phone"), 1'000);
  EXPECT_TRUE(is_revoked(m, dev("phone"), 999));
  EXPECT_TRUE(is_revoked(m, dev("phone"), 0));  // a token without issued-at
  EXPECT_FALSE(is_revoked(m, dev("phone"), 1'000))
      << "a token minted in the revoking millisecond is a new login";
  EXPECT_FALSE(is_revoked(m, dev("phone"), 1'001));
  EXPECT_FALSE(is_revoked(m, dev("laptop"), 999)) << "another device of the user stays";
}

TEST(Revocation, AUserMarkRevokesEveryDevice) {
  RevocationMarks m;
  m.raise(std::nullopt, 2'000);
  EXPECT_TRUE(is_revoked(m, dev("phone"), 1'999));
  EXPECT_TRUE(is_revoked(m, dev("laptop"), 1'999));
  EXPECT_FALSE(is_revoked(m, dev("laptop"), 2'000));
}

TEST(Revocation, TheLaterOfUserAndDeviceApplies) {
  RevocationMarks m;
  m.raise(std::nullopt, 1'000);
  m.raise(dev("phone"), 3'000);
  EXPECT_EQ(m.not_before(dev("phone")), 3'000);
  EXPECT_EQ(m.not_before(dev("laptop")), 1'000);
  EXPECT_TRUE(is_revoked(m, dev("phone"), 2'000));
  EXPECT_FALSE(is_revoked(m, dev("laptop"), 2'000));
}

TEST(Revocation, MarksAreNeverLowered) {
  RevocationMarks m;
  m.raise(dev("phone"), 5'000);
  m.raise(dev("phone"), 1'000);
  m.raise(std::nullopt, 7'000);
  m.raise(std::nullopt, 6'000);
  EXPECT_EQ(m.device_not_before_ms.at("phone"), 5'000);
  EXPECT_EQ(m.user_not_before_ms, 7'000);
}

TEST(Revocation, TheSignalRoundTripsAndIsNoClientFrame) {
  const auto user = *UserId::parse("alice");
  for (const std::optional<DeviceId>& device :
       {std::optional<DeviceId>(), std::optional<DeviceId>(dev("ph.one"))}) {
    const std::string frame = encode_revocation_signal(user, device, 123'456);
    ASSERT_TRUE(is_revocation_signal(frame)) << frame;
    auto s = decode_revocation_signal(frame);
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    EXPECT_EQ(s->user.str(), "alice");
    EXPECT_EQ(s->marks.not_before(dev("ph.one")), 123'456);
    EXPECT_EQ(s->marks.not_before(dev("other")), device ? 0 : 123'456);
  }
  EXPECT_FALSE(is_revocation_signal(R"({"type":"TYPING","conversation":"d:a:b"})"));
  EXPECT_FALSE(
      decode_revocation_signal(R"({"type":"~SESSION_REVOKED","user":"a:b","device":null,"not_before":1})")
          .ok());
  EXPECT_FALSE(
      decode_revocation_signal(R"({"type":"~SESSION_REVOKED","user":"a","device":null,"not_before":x})")
          .ok());
}

}  // namespace
}  // namespace qim
