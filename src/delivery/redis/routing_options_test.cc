// The routing variables: defaults, and a Config error naming the variable for every bad value.
#include "delivery/redis/routing_options.h"

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

TEST(RoutingOptions, DefaultsAndAUniqueGatewayIdPerProcess) {
  auto o = routing_options_from_env(env({}));
  ASSERT_TRUE(o.ok()) << o.error().to_string();
  EXPECT_EQ(o->endpoints, std::vector<std::string>{"127.0.0.1:16381"});
  EXPECT_EQ(o->route_ttl, std::chrono::milliseconds(30'000));
  EXPECT_FALSE(o->gateway_id.empty());
  auto again = routing_options_from_env(env({}));
  EXPECT_NE(o->gateway_id, again->gateway_id);  // the random part
}

TEST(RoutingOptions, ReadsTheVariables) {
  auto o = routing_options_from_env(env({{"QIM_ROUTING_REDIS", "127.0.0.1:7000, 10.0.0.2:7001"},
                                         {"QIM_GATEWAY_ID", "gw-a.1"},
                                         {"QIM_ROUTE_TTL_MS", "5000"},
                                         {"QIM_ROUTING_REDIS_PREFIX", "dep1:"}}));
  ASSERT_TRUE(o.ok()) << o.error().to_string();
  EXPECT_EQ(o->endpoints, (std::vector<std::string>{"127.0.0.1:7000", "10.0.0.2:7001"}));
  EXPECT_EQ(o->gateway_id, "gw-a.1");
  EXPECT_EQ(o->route_ttl, std::chrono::milliseconds(5000));
  EXPECT_EQ(o->key_prefix, "dep1:");
}

TEST(RoutingOptions, BadValuesAreConfigErrorsNamingTheVariable) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"QIM_ROUTING_REDIS", ""},          {"QIM_ROUTING_REDIS", "localhost"},
      {"QIM_ROUTING_REDIS", "h:99999"},   {"QIM_ROUTE_TTL_MS", "0"},
      {"QIM_ROUTE_TTL_MS", "12ms"},       {"QIM_ROUTE_TTL_MS", "999"},
      {"QIM_ROUTE_TTL_MS", "3600001"},    {"QIM_GATEWAY_ID", ""},
      {"QIM_GATEWAY_ID", "has space"},    {"QIM_GATEWAY_ID", std::string(129, 'a')},
      {"QIM_ROUTING_REDIS_PREFIX", "a*"},
  };
  for (const auto& [var, value] : bad) {
    auto o = routing_options_from_env(env({{var, value}}));
    ASSERT_FALSE(o.ok()) << var << "='" << value << "' accepted";
    EXPECT_EQ(o.code(), Errc::kConfig);
    EXPECT_NE(o.error().message().find(var), std::string::npos) << o.error().message();
  }
}

}  // namespace
}  // namespace qim
