#include "auth/token.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "auth/base64url.h"

namespace qim {
namespace {

constexpr std::string_view kSecret = "test-secret-of-enough-length";
constexpr std::string_view kBadSignature = "token signature does not match";

UserId user(const char* s) {
  return *UserId::parse(s);
}
DeviceId device(const char* s) {
  return *DeviceId::parse(s);
}

// A token over any payload, signed with kSecret the way mint_token signs: what a minting bug, an old
// minter or a hand-made token could carry past the signature check.
std::string signed_token(std::string_view payload) {
  const std::string head = base64url_encode(payload);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), kSecret.data(), static_cast<int>(kSecret.size()),
       reinterpret_cast<const unsigned char*>(head.data()), head.size(), mac, &len);
  return head + "." + base64url_encode(std::string(reinterpret_cast<const char*>(mac), len));
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
  // In UTC for people, not epoch milliseconds (issue 37), with what to do.
  EXPECT_NE(
      p.error().message().find("token expired at 1970-01-01 00:17:40 UTC (now 1970-01-01 00:17:40 UTC)"),
      std::string::npos)
      << p.error().message();
  EXPECT_NE(p.error().message().find("qim token"), std::string::npos) << p.error().message();
}

// A token from another data directory (another secret) says so and what to do (issue 37).
TEST(Token, ABadSignatureSaysWhereTheTokenMustComeFrom) {
  ManualClock clock(1'000'000);
  auto token = mint_token("another-secret-of-enough-length", user("alice"), device("phone"), 60'000, clock);
  ASSERT_TRUE(token.ok());
  auto p = verify_token(kSecret, *token, clock);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message().find("another secret"), std::string::npos) << p.error().message();
  EXPECT_NE(p.error().message().find("--data-dir"), std::string::npos) << p.error().message();
}

TEST(Token, AnotherSecretIsABadSignature) {
  ManualClock clock(0);
  auto token = mint_token(kSecret, user("alice"), device("phone"), 60'000, clock);
  auto p = verify_token("another-secret", *token, clock);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.code(), Errc::kUnauthenticated);
  EXPECT_EQ(p.error().message().rfind(kBadSignature, 0), 0u) << p.error().message();
}

TEST(Token, ChangedPayloadIsABadSignature) {
  ManualClock clock(0);
  auto token = *mint_token(kSecret, user("alice"), device("phone"), 60'000, clock);
  auto mallory = *mint_token(kSecret, user("mallory"), device("phone"), 60'000, clock);
  // Alice's signature on Mallory's payload: the classic forgery attempt.
  std::string forged = mallory.substr(0, mallory.find('.')) + token.substr(token.find('.'));
  auto p = verify_token(kSecret, forged, clock);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message().rfind(kBadSignature, 0), 0u) << p.error().message();
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

// Session revocation compares the issued-at time with a not_before (sessions/revocation.h).
TEST(Token, CarriesItsIssuedAtTime) {
  ManualClock clock(1'234'567);
  auto p = verify_token(kSecret, *mint_token(kSecret, user("alice"), device("phone"), 60'000, clock), clock);
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  EXPECT_EQ(p->issued_at_ms, 1'234'567);
  EXPECT_EQ(p->expires_at_ms, 1'234'567 + 60'000);
}

// A token minted before the field existed still verifies, issued at 0: any revocation refuses it.
TEST(Token, AFourFieldTokenIsIssuedAtZero) {
  ManualClock clock(0);
  auto p = verify_token(kSecret, signed_token("qim1|alice|phone|99999999"), clock);
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  EXPECT_EQ(p->issued_at_ms, 0);
  for (std::string_view payload :
       {"qim1|alice|phone|99999999|x", "qim1|alice|phone|99999999|-5", "qim1|alice|phone|99999999|1|2"}) {
    auto bad = verify_token(kSecret, signed_token(payload), clock);
    ASSERT_FALSE(bad.ok()) << payload;
    EXPECT_EQ(bad.error().message().rfind("token malformed: ", 0), 0u) << bad.error().message();
  }
}

TEST(Token, SignedButUnknownPayloadIsMalformed) {
  ManualClock clock(0);
  // Signed with the right secret by hand, but not our payload format.
  std::string head = base64url_encode("qim2|alice|phone|99999999");
  auto real = *mint_token(kSecret, user("alice"), device("phone"), 1, clock);
  auto p = verify_token(kSecret, head + real.substr(real.find('.')), clock);
  ASSERT_FALSE(p.ok());
  // The MAC covers the head, so a foreign head fails the signature before its format is looked at.
  EXPECT_EQ(p.error().message().rfind(kBadSignature, 0), 0u) << p.error().message();
}

// A name with ':' would make conversation ids ambiguous (issue 8, item 1): even a correctly signed token
// naming one is refused at AUTH, and no such token is minted.
TEST(Token, ASignedTokenWhoseNamesHoldTheSeparatorIsMalformed) {
  ManualClock clock(0);
  auto fine = verify_token(kSecret, signed_token("qim1|alice|phone|99999999"), clock);
  ASSERT_TRUE(fine.ok()) << fine.error().to_string();  // the hand signer signs as mint_token does
  for (std::string_view payload :
       {"qim1|bob:carol|phone|99999999", "qim1|acme:alice|phone|99999999", "qim1|alice|ph:one|99999999"}) {
    auto p = verify_token(kSecret, signed_token(payload), clock);
    ASSERT_FALSE(p.ok()) << payload;
    EXPECT_EQ(p.code(), Errc::kUnauthenticated);
    EXPECT_EQ(p.error().message().rfind("token malformed: ", 0), 0u)
        << payload << ": " << p.error().message();
    EXPECT_NE(p.error().message().find("':'"), std::string::npos) << p.error().message();
  }
}

TEST(Token, MintingRefusesNamesOutsideTheAlphabet) {
  ManualClock clock(0);
  auto t = mint_token(kSecret, UserId::unchecked("bob:carol"), device("phone"), 60'000, clock);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.code(), Errc::kInvalidArgument);
  EXPECT_NE(t.error().message().find("user id 'bob:carol'"), std::string::npos) << t.error().message();
  auto d = mint_token(kSecret, user("alice"), DeviceId::unchecked("ph:one"), 60'000, clock);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message().find("device id"), std::string::npos) << d.error().message();
}

TEST(Token, EmptySecretIsAConfigError) {
  ManualClock clock(0);
  EXPECT_EQ(mint_token("", user("a"), device("d"), 1, clock).code(), Errc::kConfig);
  EXPECT_EQ(verify_token("", "x.y", clock).code(), Errc::kConfig);
  EXPECT_EQ(mint_token(kSecret, user("a"), device("d"), 0, clock).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace qim
