// The router's refusals, before any store is touched: keys, scopes, routes, bodies, rate.
#include "api/api_router.h"

#include "auth/token.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>

namespace qim::api {
namespace {

class ApiRouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("qim-api-router-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "api-keys").string();
    std::filesystem::remove(path_);
    options_.keys_file = path_;
    options_.rate_per_second = 1;
    options_.burst = 3;
    tokens_key_ = create_api_key(path_, static_cast<Scopes>(Scope::kTokens), "t", 1)->key;
    read_key_ = create_api_key(path_, static_cast<Scopes>(Scope::kRead), "r", 1)->key;
    deps_.clock = std::make_shared<SystemClock>();
    deps_.auth_secret = "secret";
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  ApiResponse call(const std::string& method, const std::string& target, const std::string& key,
                   const std::string& body = "") {
    ApiRouter router(options_, deps_);
    return call_on(router, method, target, key, body);
  }
  static ApiResponse call_on(ApiRouter& router, const std::string& method, const std::string& target,
                             const std::string& key, const std::string& body = "") {
    ApiRequest r;
    r.method = method;
    r.target = target;
    if (!key.empty()) r.authorization = "Bearer " + key;
    r.body = body;
    return router.handle(r);
  }
  static std::string code_of(const ApiResponse& r) {
    EXPECT_EQ(r.content_type, "application/problem+json");
    return std::string(boost::json::parse(r.body).as_object().at("code").as_string());
  }

  std::filesystem::path dir_;
  std::string path_;
  ApiOptions options_;
  ApiDeps deps_;
  std::string tokens_key_;
  std::string read_key_;
};

TEST_F(ApiRouterTest, MissingWrongAndRevokedKeysAreUnauthenticated) {
  auto none = call("POST", "/v1/tokens", "", "{}");
  EXPECT_EQ(none.status, 401u);
  EXPECT_EQ(code_of(none), "UNAUTHENTICATED");
  auto wrong = call("POST", "/v1/tokens", "qim_000000000000_nope", "{}");
  EXPECT_EQ(wrong.status, 401u);
  auto id = key_id_of(tokens_key_);
  ASSERT_TRUE(revoke_api_key(path_, *id, 5).ok());
  auto revoked = call("POST", "/v1/tokens", tokens_key_, R"({"user":"alice"})");
  EXPECT_EQ(revoked.status, 401u);
  EXPECT_NE(revoked.body.find("revoked"), std::string::npos);
}

TEST_F(ApiRouterTest, MissingScopeIsForbidden) {
  auto r = call("POST", "/v1/tokens", read_key_, R"({"user":"alice"})");
  EXPECT_EQ(r.status, 403u);
  EXPECT_EQ(code_of(r), "FORBIDDEN");
  EXPECT_NE(r.body.find("'tokens'"), std::string::npos);
}

TEST_F(ApiRouterTest, UnknownRouteAndWrongMethod) {
  auto r = call("GET", "/v1/nothing", read_key_);
  EXPECT_EQ(r.status, 404u);
  EXPECT_EQ(code_of(r), "NOT_FOUND");
  auto m = call("GET", "/v1/tokens", tokens_key_);
  EXPECT_EQ(m.status, 405u);
  ASSERT_EQ(m.headers.size(), 1u);
  EXPECT_EQ(m.headers[0].first, "Allow");
  EXPECT_EQ(m.headers[0].second, "POST");
}

TEST_F(ApiRouterTest, BadJsonIsBadFrame) {
  auto r = call("POST", "/v1/tokens", tokens_key_, "{not json");
  EXPECT_EQ(r.status, 400u);
  EXPECT_EQ(code_of(r), "BAD_FRAME");
  auto a = call("POST", "/v1/tokens", tokens_key_, "[1]");
  EXPECT_EQ(code_of(a), "BAD_FRAME");
}

TEST_F(ApiRouterTest, MintsATokenThatVerifies) {
  auto r = call("POST", "/v1/tokens", tokens_key_, R"({"user":"alice","device":"phone","ttl_seconds":60})");
  ASSERT_EQ(r.status, 201u) << r.body;
  auto o = boost::json::parse(r.body).as_object();
  SystemClock clock;
  auto who = verify_token("secret", std::string(o.at("token").as_string()), clock);
  ASSERT_TRUE(who.ok());
  EXPECT_EQ(who->user.str(), "alice");
  EXPECT_EQ(who->device.str(), "phone");
  auto bad = call("POST", "/v1/tokens", tokens_key_, R"({"user":"a:b"})");
  EXPECT_EQ(code_of(bad), "INVALID_ARGUMENT");
}

TEST_F(ApiRouterTest, RateLimitedPerKey) {
  ApiRouter router(options_, deps_);
  // Burst 3 at 1 per second: of 20 quick requests some are refused, and the other key is not.
  int limited = 0;
  for (int i = 0; i < 20; ++i) {
    auto r = call_on(router, "GET", "/v1/nothing", read_key_);
    if (r.status == 429u) {
      ++limited;
      EXPECT_EQ(code_of(r), "RATE_LIMITED");
    }
  }
  EXPECT_GE(limited, 1);
  EXPECT_EQ(call_on(router, "GET", "/v1/nothing", tokens_key_).status, 404u);
}

}  // namespace
}  // namespace qim::api
