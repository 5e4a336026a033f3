// GET /dev/token: a loopback peer is not enough (issue 36, item 9). A same-host proxy and a DNS-rebound
// page connect from loopback too; the Host header and the forwarding headers tell them apart.
#include "gateway/plain_http.h"

#include <gtest/gtest.h>

namespace qim {
namespace {

namespace http = boost::beast::http;

constexpr uint16_t kPort = 41307;

class DevTokenTest : public ::testing::Test {
 protected:
  DevTokenTest() {
    options_.auth_secret = "a-test-secret-of-enough-length-0123456789";
    options_.dev_tokens = true;
  }
  http::status ask(const std::string& host,
                   const std::vector<std::pair<std::string, std::string>>& extra = {}, bool loopback = true) {
    http::request<http::empty_body> req(http::verb::get, "/dev/token?user=alice&device=web", 11);
    if (!host.empty()) req.set(http::field::host, host);
    for (const auto& [k, v] : extra) req.set(k, v);
    return answer_plain_http(req, options_, PlainHttpPeer{loopback, kPort}, clock_).status;
  }

  GatewayOptions options_;
  ManualClock clock_{1'700'000'000'000};
};

TEST_F(DevTokenTest, APageOnLoopbackAtThisPortGetsAToken) {
  const std::string port = std::to_string(kPort);
  EXPECT_EQ(ask("127.0.0.1:" + port), http::status::ok);
  EXPECT_EQ(ask("localhost:" + port), http::status::ok);
  EXPECT_EQ(ask("LocalHost:" + port), http::status::ok);
  EXPECT_EQ(ask("[::1]:" + port), http::status::ok);
  EXPECT_EQ(ask("127.0.0.2:" + port), http::status::ok);
}

TEST_F(DevTokenTest, ARemotePeerGetsNone) {
  EXPECT_EQ(ask("127.0.0.1:" + std::to_string(kPort), {}, /*loopback=*/false), http::status::forbidden);
}

// DNS rebinding: evil.example resolves to 127.0.0.1, the browser connects from loopback, but the Host
// header still says evil.example.
TEST_F(DevTokenTest, AReboundNameGetsNone) {
  const std::string port = std::to_string(kPort);
  EXPECT_EQ(ask("evil.example:" + port), http::status::forbidden);
  EXPECT_EQ(ask("127.0.0.1.evil.example:" + port), http::status::forbidden);
  EXPECT_EQ(ask("localhost.evil.example:" + port), http::status::forbidden);
  EXPECT_EQ(ask(""), http::status::forbidden);
  EXPECT_EQ(ask("10.0.0.1:" + port), http::status::forbidden);
}

TEST_F(DevTokenTest, AnotherPortOnLoopbackGetsNone) {
  EXPECT_EQ(ask("127.0.0.1:8080"), http::status::forbidden);
  EXPECT_EQ(ask("127.0.0.1"), http::status::forbidden);  // port 80
  EXPECT_EQ(ask("127.0.0.1:"), http::status::forbidden);
  EXPECT_EQ(ask("127.0.0.1:x" + std::to_string(kPort)), http::status::forbidden);
}

// A proxy on the same host connects from loopback, often with Host rewritten to the upstream's; it adds
// a forwarding header.
TEST_F(DevTokenTest, AForwardedRequestGetsNone) {
  const std::string host = "127.0.0.1:" + std::to_string(kPort);
  EXPECT_EQ(ask(host, {{"X-Forwarded-For", "203.0.113.9"}}), http::status::forbidden);
  EXPECT_EQ(ask(host, {{"Forwarded", "for=203.0.113.9"}}), http::status::forbidden);
  EXPECT_EQ(ask(host, {{"X-Forwarded-Host", "chat.example"}}), http::status::forbidden);
  EXPECT_EQ(ask(host, {{"X-Real-IP", "203.0.113.9"}}), http::status::forbidden);
}

}  // namespace
}  // namespace qim
