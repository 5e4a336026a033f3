// The protocol's edges as a black-box client meets them: refs on RATE_LIMITED, a reason on every close,
// AUTH before anything, numbers and keys the parser must not guess at, and the admin port's methods.
#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <set>

#include "client/client.h"
#include "gateway/gateway.h"
#include "gateway/tests/gateway_harness.h"

namespace qim {
namespace {

using namespace std::chrono_literals;
using client::Client;
using client::ServerFrame;

constexpr const char* kSecret = "gateway-protocol-test-secret";
constexpr auto kWait = 5s;

class GatewayProtocolTest : public testing::GatewayHarness {
 protected:
  GatewayProtocolTest() : GatewayHarness(kSecret) {}
  void SetUp() override { start({}); }

  void configure(GatewayOptions& o, GatewayDeps& d) override {
    o.max_body_bytes = 1024;
    o.max_frame_bytes = 4096;
    d.admin_routes.push_back(AdminRoute{"POST", "/admin/poke", [](const std::string&, const std::string&) {
                                          return AdminResponse{200, "poked\n"};
                                        }});
  }

  struct AdminAnswer {
    unsigned status = 0;
    std::string allow;
    std::string body;
  };
  AdminAnswer admin(boost::beast::http::verb method, const std::string& path) {
    namespace net = boost::asio;
    namespace http = boost::beast::http;
    net::io_context io;
    net::ip::tcp::socket s(io);
    s.connect({net::ip::make_address("127.0.0.1"), gateway_->admin_port()});
    http::request<http::empty_body> req(method, path, 11);
    req.set(http::field::host, "127.0.0.1");
    http::write(s, req);
    boost::beast::flat_buffer buf;
    http::response<http::string_body> res;
    http::read(s, buf, res);
    return {res.result_int(), std::string(res[http::field::allow]), res.body()};
  }
};

TEST_F(GatewayProtocolTest, RateLimitedErrorsCarryTheDroppedFramesRef) {
  start([](GatewayOptions& o) { o.max_frames_per_second = 5; });
  auto c = login("alice");
  for (int i = 0; i < 20; ++i) c->send_text(client::ping_frame("p" + std::to_string(i)));
  // Every frame is answered under its own ref: a PONG, or the RATE_LIMITED error of the dropped frame.
  int limited = 0;
  for (int i = 0; i < 20; ++i) {
    auto answer = c->wait_ref("p" + std::to_string(i), kWait);
    ASSERT_TRUE(answer.ok()) << "frame p" << i << " was never answered: " << answer.error().to_string();
    if (answer->type == "ERROR") {
      EXPECT_EQ(answer->code, "RATE_LIMITED") << answer->raw;
      ++limited;
    } else {
      EXPECT_EQ(answer->type, "PONG") << answer->raw;
    }
  }
  EXPECT_GT(limited, 0);
  EXPECT_EQ(c->queued(), 0u);  // no RATE_LIMITED without a ref left over
}

TEST_F(GatewayProtocolTest, InvalidUtf8ClosesWith1007AndAReason) {
  auto c = login("alice");
  c->send_text("{\"type\":\"PING\",\"ref\":\"\xff\xfe\"}");
  EXPECT_EQ(c->wait_type("never", kWait).code(), Errc::kTransport);
  EXPECT_EQ(c->close_code(), 1007);
  EXPECT_NE(c->close_reason().find("UTF-8"), std::string::npos) << c->close_reason();
}

TEST_F(GatewayProtocolTest, AFrameOverTheLimitClosesWith1009AndAReason) {
  auto c = login("alice");
  c->send_text(std::string(5000, ' '));
  EXPECT_EQ(c->wait_type("never", kWait).code(), Errc::kTransport);
  EXPECT_EQ(c->close_code(), 1009);
  EXPECT_NE(c->close_reason().find("frame over 4096 bytes"), std::string::npos) << c->close_reason();
  EXPECT_TRUE(login("bob")->send("alice", "c", "still serving").ok());
}

TEST_F(GatewayProtocolTest, AProtocolViolationClosesWith1002AndAReason) {
  namespace net = boost::asio;
  namespace websocket = boost::beast::websocket;
  net::io_context io;
  websocket::stream<net::ip::tcp::socket> ws(io);
  ws.next_layer().connect({net::ip::make_address("127.0.0.1"), gateway_->port()});
  ws.handshake("127.0.0.1", "/");
  // A masked frame with the reserved opcode 0x3 and no payload: no conforming client sends it.
  const unsigned char bad[] = {0x83, 0x80, 0x01, 0x02, 0x03, 0x04};
  net::write(ws.next_layer(), net::buffer(bad));
  boost::beast::flat_buffer buf;
  boost::beast::error_code ec;
  ws.read(buf, ec);
  EXPECT_EQ(ec, websocket::error::closed) << ec.message();
  EXPECT_EQ(ws.reason().code, 1002);
  EXPECT_NE(std::string(ws.reason().reason.c_str()).find("protocol error"), std::string::npos)
      << ws.reason().reason.c_str();
}

TEST_F(GatewayProtocolTest, EveryFrameBeforeAuthIsUnauthenticatedAndCloses) {
  for (const std::string frame :
       {R"({"type":"DANCE","ref":"r"})", R"({"type":"SYNC","limit":0,"ref":"r"})", R"(not json)"}) {
    auto c = connect();
    c->send_text(frame);
    auto e = c->wait_type("ERROR", kWait);
    ASSERT_TRUE(e.ok()) << frame << ": " << e.error().to_string();
    EXPECT_EQ(e->code, "UNAUTHENTICATED") << frame << " -> " << e->raw;
    EXPECT_NE(e->message.find("the first frame must be AUTH"), std::string::npos) << e->raw;
    EXPECT_EQ(c->wait_type("never", kWait).code(), Errc::kTransport);
    EXPECT_EQ(c->close_code(), 1008);
    EXPECT_FALSE(c->close_reason().empty());
  }
  // A refused AUTH frame still hears why.
  auto c = connect();
  c->send_text(R"({"type":"AUTH","ref":"a"})");
  auto e = c->wait_ref("a", kWait);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->code, "INVALID_ARGUMENT") << e->raw;
}

TEST_F(GatewayProtocolTest, ANumberBeyond64BitsIsAnInvalidArgumentNamingTheField) {
  auto c = login("alice");
  c->send_text(R"({"type":"SYNC","ref":"n","after":18446744073709551616})");
  auto e = c->wait_ref("n", kWait);
  ASSERT_TRUE(e.ok()) << e.error().to_string();
  EXPECT_EQ(e->code, "INVALID_ARGUMENT") << e->raw;
  EXPECT_NE(e->message.find("'after'"), std::string::npos) << e->raw;
}

TEST_F(GatewayProtocolTest, ARepeatedKeyIsRefusedAndNothingIsSent) {
  auto c = login("alice");
  c->send_text(R"({"type":"SEND","ref":"d","client_msg_id":"c1","to":"bob","to":"carol","body":"x"})");
  auto e = c->wait_ref("d", kWait);
  ASSERT_TRUE(e.ok()) << e.error().to_string();
  EXPECT_EQ(e->code, "INVALID_ARGUMENT") << e->raw;
  EXPECT_NE(e->message.find("'to'"), std::string::npos) << e->raw;
  EXPECT_EQ(log_.total_records(), 0u);
}

TEST_F(GatewayProtocolTest, AdminRoutesAnswerWrongMethodsWith405AndAllow) {
  namespace http = boost::beast::http;
  EXPECT_EQ(admin(http::verb::get, "/healthz").status, 200u);
  auto post_health = admin(http::verb::post, "/healthz");
  EXPECT_EQ(post_health.status, 405u) << post_health.body;
  EXPECT_EQ(post_health.allow, "GET");
  auto delete_metrics = admin(http::verb::delete_, "/metrics");
  EXPECT_EQ(delete_metrics.status, 405u) << delete_metrics.body;
  EXPECT_EQ(delete_metrics.allow, "GET");
  auto get_poke = admin(http::verb::get, "/admin/poke");
  EXPECT_EQ(get_poke.status, 405u);
  EXPECT_EQ(get_poke.allow, "POST");
  EXPECT_EQ(admin(http::verb::post, "/admin/poke").body, "poked\n");
  EXPECT_EQ(admin(http::verb::get, "/nope").status, 404u);
}

}  // namespace
}  // namespace qim
