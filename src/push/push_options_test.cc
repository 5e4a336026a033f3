#include "push/push_options.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "log/testing/temp_dir.h"

namespace qim {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(PushOptionsTest, OffByDefaultAndBadValuesNameTheVariable) {
  auto c = push_config_from_env(env_of({}), std::nullopt).value();
  EXPECT_FALSE(c.enabled);
  EXPECT_EQ(c.vapid, nullptr);
  auto bad = push_config_from_env(env_of({{"QIM_PUSH_COLLAPSE_MS", "-1"}}), std::nullopt);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("QIM_PUSH_COLLAPSE_MS"), std::string::npos);
  EXPECT_FALSE(push_config_from_env(env_of({{"QIM_PUSH", "maybe"}}), std::nullopt).ok());
  EXPECT_FALSE(push_config_from_env(env_of({{"QIM_PUSH_VAPID_SUBJECT", "admin"}}), std::nullopt).ok());
  // A distributed process never makes a key of its own: every process must share one.
  EXPECT_FALSE(
      push_config_from_env(env_of({{"QIM_PUSH_VAPID_KEY_FILE", "/nonexistent/vapid.pem"}}), std::nullopt)
          .ok());
}

TEST(PushOptionsTest, QimUpMakesTheVapidKeyOnceAndKeepsIt) {
  testing::TempDir dir;
  auto first = push_config_from_env(env_of({{"QIM_PUSH", "on"}}), dir.path()).value();
  ASSERT_NE(first.vapid, nullptr);
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir.path()) / "push" / "vapid.pem"));
  auto again = push_config_from_env(env_of({{"QIM_PUSH", "on"}}), dir.path()).value();
  EXPECT_EQ(again.vapid->public_raw(), first.vapid->public_raw());
}

}  // namespace
}  // namespace qim
