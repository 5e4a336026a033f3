#include "webhooks/signature.h"

#include <gtest/gtest.h>

namespace qim {
namespace {

// The test vector published with the Standard Webhooks reference libraries.
TEST(WebhookSignature, MatchesTheStandardWebhooksVector) {
  auto key = decode_webhook_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  ASSERT_TRUE(key.ok()) << key.error().to_string();
  EXPECT_EQ(key->size(), 24u);
  EXPECT_EQ(webhook_signature(*key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, R"({"test": 2432232314})"),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
}

TEST(WebhookSignature, TheSecretPrefixIsOptionalAndTheBodyCounts) {
  auto with = decode_webhook_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").value();
  auto without = decode_webhook_secret("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").value();
  EXPECT_EQ(with, without);
  EXPECT_NE(webhook_signature(with, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, R"({"test": 2432232315})"),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
}

TEST(WebhookSignature, RefusesSecretsThatAreNotBase64OrTooShort) {
  EXPECT_FALSE(decode_webhook_secret("whsec_").ok());
  EXPECT_FALSE(decode_webhook_secret("whsec_not base64!").ok());
  EXPECT_FALSE(decode_webhook_secret("whsec_c2hvcnQ=").ok());  // "short": 5 bytes
  EXPECT_EQ(decode_webhook_secret("whsec_c2hvcnQ=").error().code(), Errc::kInvalidArgument);
}

TEST(WebhookSignature, Base64PadsAsTheSchemeDoes) {
  EXPECT_EQ(base64_encode("a"), "YQ==");
  EXPECT_EQ(base64_encode("ab"), "YWI=");
  EXPECT_EQ(base64_encode("abc"), "YWJj");
}

}  // namespace
}  // namespace qim
