#include "auth/token.h"

#include <gtest/gtest.h>

#include "auth/base64url.h"

namespace qim {
namespace {

constexpr std::string_view kSecret = "test-secret-of-enough-length";

UserId user(const char* s) {
  return *UserId::parse(s);
}
DeviceId device(const char* s) {
  return *DeviceId::parse(s);
}

TEST(Token, RoundTripsUserDeviceAndExpiry) {
  ManualClock clock(1'000'000);
  auto token = mint_token(kSecret, user("alice"), device("phone"), 60'000, clock);
  ASSERT_TRUE(token.ok()) << token.error().to_string();
  auto p = verify_token(kSecret, *token, clock);
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  EXPECT_EQ(p->user.str(), "alice");
  EXPECT_EQ(p->device.str(), "phone");
  EXPECT_EQ(p->expires_at_ms, 1'060'000);
}

TEST(Token, ExpiredIsRefusedWithItsOwnMessage) {
  ManualClock clock(1'000'000);
  auto token = mint_token(kSecret, user("alice"), device("phone"), 60'000, clock);
  ASSERT_TRUE(token.ok());
  clock.advance_ms(59'999);
  EXPECT_TRUE(verify_token(kSecret, *token, clock).ok());
  clock.advance_ms(1);
  auto p = verify_token(kSecret, *token, clock);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.code(), Errc::kUnauthenticated);
  EXPECT_EQ(p.error().message().rfind("token expired", 0), 0u) << p.error().message();
}

TEST(Token, AnotherSecretIsABadSignature) {
  ManualClock clock(0);
  auto token = mint_token(kSecret, user("alice"), device("phone"), 60'000, clock);
  auto p = verify_token("another-secret", *token, clock);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.code(), Errc::kUnauthenticated);
  EXPECT_EQ(p.error().message(), "token signature does not match");
}

TEST(Token, ChangedPayloadIsABadSignature) {
  ManualClock clock(0);
  auto token = *mint_token(kSecret, user("alice"), device("phone"), 60'000, clock);
  auto mallory = *mint_token(kSecret, user("mallory"), device("phone"), 60'000, clock);
  // Alice's signature on Mallory's payload: the classic forgery attempt.
  std::string forged = mallory.substr(0, mallory.find('.')) + token.substr(token.find('.'));
  auto p = verify_token(kSecret, forged, clock);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message(), "token signature does not match");
  // A flipped signature bit too.
  std::string flipped = token;
  flipped.back() = flipped.back() == 'A' ? 'Q' : 'A';
  EXPECT_FALSE(verify_token(kSecret, flipped, clock).ok());
}

TEST(Token, MalformedShapesAreMalformed) {
  ManualClock clock(0);
  for (std::string_view bad : {"", "abc", "a.b.c", "!!!.AAAA", "e30.", ".e30", "e30.e30"}) {
    auto p = verify_token(kSecret, bad, clock);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_EQ(p.code(), Errc::kUnauthenticated);
    EXPECT_EQ(p.error().message().rfind("token malformed", 0), 0u) << bad << ": " << p.error().message();
  }
  EXPECT_FALSE(verify_token(kSecret, std::string(kMaxTokenBytes + 1, 'A'), clock).ok());
}

TEST(Token, SignedButUnknownPayloadIsMalformed) {
  ManualClock clock(0);
  // Signed with the right secret by hand, but not our payload format.
  std::string head = base64url_encode("qim2|alice|phone|99999999");
  auto real = *mint_token(kSecret, user("alice"), device("phone"), 1, clock);
  auto p = verify_token(kSecret, head + real.substr(real.find('.')), clock);
  ASSERT_FALSE(p.ok());
  // The MAC covers the head, so a foreign head fails the signature before its format is looked at.
  EXPECT_EQ(p.error().message(), "token signature does not match");
}

TEST(Token, EmptySecretIsAConfigError) {
  ManualClock clock(0);
  EXPECT_EQ(mint_token("", user("a"), device("d"), 1, clock).code(), Errc::kConfig);
  EXPECT_EQ(verify_token("", "x.y", clock).code(), Errc::kConfig);
  EXPECT_EQ(mint_token(kSecret, user("a"), device("d"), 0, clock).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace qim
