#include "auth/base64url.h"

#include <gtest/gtest.h>

namespace qim {
namespace {

TEST(Base64Url, KnownVectors) {
  // RFC 4648 section 10, without padding.
  EXPECT_EQ(base64url_encode(""), "");
  EXPECT_EQ(base64url_encode("f"), "Zg");
  EXPECT_EQ(base64url_encode("fo"), "Zm8");
  EXPECT_EQ(base64url_encode("foo"), "Zm9v");
  EXPECT_EQ(base64url_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64url_encode("\xfb\xff"), "-_8");
}

TEST(Base64Url, RoundTripsEveryByte) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (size_t n = 0; n <= all.size(); n += 37) {
    auto back = base64url_decode(base64url_encode(all.substr(0, n)));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, all.substr(0, n));
  }
}

TEST(Base64Url, RefusesForeignCharactersPaddingAndNonCanonicalForms) {
  EXPECT_FALSE(base64url_decode("Zg==").has_value());
  EXPECT_FALSE(base64url_decode("Z+8").has_value());
  EXPECT_FALSE(base64url_decode("Zm9vY").has_value());  // 4n + 1 characters
  EXPECT_FALSE(base64url_decode("Zh").has_value());     // "Zg" with non-zero leftover bits
}

}  // namespace
}  // namespace qim
