#include "webhooks/webhook_options.h"

#include <gtest/gtest.h>

#include <map>

namespace qim {
namespace {

EnvLookup env(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

constexpr const char* kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

TEST(WebhookOptions, NoUrlNoWebhook) {
  auto c = webhook_config_from_env(env({{"QIM_WEBHOOK_SECRET", kSecret}}));
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->has_value());
}

TEST(WebhookOptions, DefaultsRetryForLongerThanAnHour) {
  auto c = webhook_config_from_env(
      env({{"QIM_WEBHOOK_URL", "http://127.0.0.1:8080/hooks/qim?x=1"}, {"QIM_WEBHOOK_SECRET", kSecret}}));
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  ASSERT_TRUE(c->has_value());
  const WebhookConfig& w = **c;
  EXPECT_EQ(w.url.host, "127.0.0.1");
  EXPECT_EQ(w.url.port, 8080);
  EXPECT_EQ(w.url.target, "/hooks/qim?x=1");
  EXPECT_EQ(w.key.size(), 24u);
  EXPECT_GT(w.retry.retry_for, std::chrono::hours(1));
  EXPECT_FALSE(w.start_at_end);
}

TEST(WebhookOptions, RefusesWhatItCannotUse) {
  auto refused = [](std::map<std::string, std::string> vars) {
    auto c = webhook_config_from_env(env(std::move(vars)));
    return !c.ok() && c.error().code() == Errc::kConfig;
  };
  EXPECT_TRUE(refused({{"QIM_WEBHOOK_URL", "http://h/"}}));  // no secret
  EXPECT_TRUE(refused({{"QIM_WEBHOOK_URL", "http://h/"}, {"QIM_WEBHOOK_SECRET", "whsec_c2hvcnQ="}}));
  EXPECT_TRUE(refused({{"QIM_WEBHOOK_URL", "https://h/"}, {"QIM_WEBHOOK_SECRET", kSecret}}));
  EXPECT_TRUE(refused({{"QIM_WEBHOOK_URL", "ftp://h/"}, {"QIM_WEBHOOK_SECRET", kSecret}}));
  EXPECT_TRUE(refused({{"QIM_WEBHOOK_URL", "http://h:0/"}, {"QIM_WEBHOOK_SECRET", kSecret}}));
  EXPECT_TRUE(refused({{"QIM_WEBHOOK_URL", "http://h/"},
                       {"QIM_WEBHOOK_SECRET", kSecret},
                       {"QIM_WEBHOOK_RETRY_FOR_MS", "-1"}}));
  EXPECT_TRUE(refused(
      {{"QIM_WEBHOOK_URL", "http://h/"}, {"QIM_WEBHOOK_SECRET", kSecret}, {"QIM_WEBHOOK_START", "newest"}}));
}

}  // namespace
}  // namespace qim
