#include "ctl/endpoint.h"

#include <gtest/gtest.h>

namespace qim::ctl {
namespace {

TEST(ParseWsUrl, HostPortAndPath) {
  auto e = parse_ws_url("ws://127.0.0.1:7400/chat");
  ASSERT_TRUE(e.ok()) << e.error().to_string();
  EXPECT_EQ(e->host, "127.0.0.1");
  EXPECT_EQ(e->port, 7400);
  EXPECT_EQ(e->target, "/chat");
}

TEST(ParseWsUrl, DefaultsPortAndPathAndReadsLocalhost) {
  auto e = parse_ws_url("ws://localhost");
  ASSERT_TRUE(e.ok()) << e.error().to_string();
  EXPECT_EQ(e->host, "127.0.0.1");
  EXPECT_EQ(e->port, 80);
  EXPECT_EQ(e->target, "/");
}

TEST(ParseWsUrl, BracketedIpv6) {
  auto e = parse_ws_url("ws://[::1]:9000");
  ASSERT_TRUE(e.ok()) << e.error().to_string();
  EXPECT_EQ(e->host, "::1");
  EXPECT_EQ(e->port, 9000);
}

TEST(ParseWsUrl, WssMeansTlsWithPort443ByDefault) {
  auto e = parse_ws_url("wss://localhost/chat");
  ASSERT_TRUE(e.ok()) << e.error().to_string();
  EXPECT_TRUE(e->tls);
  EXPECT_EQ(e->host, "127.0.0.1");
  EXPECT_EQ(e->port, 443);
  EXPECT_EQ(e->target, "/chat");
  auto plain = parse_ws_url("ws://127.0.0.1:7400");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->tls);
}

TEST(ParseWsUrl, RefusesWhatTheClientCannotUse) {
  for (const char* bad :
       {"http://127.0.0.1:7400", "https://127.0.0.1", "127.0.0.1:7400", "ws://:7400", "wss://:7400",
        "ws://127.0.0.1:", "ws://127.0.0.1:0", "ws://127.0.0.1:70000", "ws://127.0.0.1:74x0", "ws://[::1"}) {
    auto e = parse_ws_url(bad);
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_EQ(e.error().code(), Errc::kInvalidArgument) << bad;
    EXPECT_NE(e.error().message().find(bad), std::string::npos) << e.error().message();
  }
}

}  // namespace
}  // namespace qim::ctl
