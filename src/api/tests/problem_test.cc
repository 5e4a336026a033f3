#include "api/problem.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace qim::api {
namespace {

TEST(Problem, DocumentHasTheRfc9457MembersAndTheWireCode) {
  auto v = boost::json::parse(problem_json(WireCode::kUnauthenticated, "unknown API key"));
  const auto& o = v.as_object();
  EXPECT_EQ(o.at("type").as_string(), "urn:qim:problem:UNAUTHENTICATED");
  EXPECT_EQ(o.at("title").as_string(), problem_title(WireCode::kUnauthenticated));
  EXPECT_EQ(o.at("status").as_int64(), 401);
  EXPECT_EQ(o.at("detail").as_string(), "unknown API key");
  EXPECT_EQ(o.at("code").as_string(), "UNAUTHENTICATED");
}

TEST(Problem, StatusOfCodes) {
  EXPECT_EQ(http_status_of(WireCode::kForbidden), 403u);
  EXPECT_EQ(http_status_of(WireCode::kNotAMember), 403u);
  EXPECT_EQ(http_status_of(WireCode::kUnknownGroup), 404u);
  EXPECT_EQ(http_status_of(WireCode::kTooLarge), 413u);
  EXPECT_EQ(http_status_of(WireCode::kRateLimited), 429u);
  EXPECT_EQ(http_status_of(WireCode::kBadFrame), 400u);
  EXPECT_EQ(http_status_of(WireCode::kInvalidArgument), 400u);
  EXPECT_EQ(http_status_of(WireCode::kUnavailable), 503u);
  // An explicit status wins (405 for a known path with another method).
  auto v = boost::json::parse(problem_json(WireCode::kNotFound, "x", 405));
  EXPECT_EQ(v.as_object().at("status").as_int64(), 405);
}

}  // namespace
}  // namespace qim::api
