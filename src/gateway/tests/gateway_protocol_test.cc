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
#include <optional>
#include <set>

#include "client/client.h"
#include "gateway/admin_server.h"
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
  // As qim's admin client asks: the admin header, Host naming the address and port. `host` and `header`
  // replace them ("" leaves the field out).
  AdminAnswer admin(boost::beast::http::verb method, const std::string& path,
                    std::optional<std::string> host = {}, std::optional<std::string> header = {},
                    const std::vector<std::pair<std::string, std::string>>& extra = {}) {
    namespace net = boost::asio;
    namespace http = boost::beast::http;
    net::io_context io;
    net::ip::tcp::socket s(io);
    s.connect({net::ip::make_address("127.0.0.1"), gateway_->admin_port()});
    http::request<http::string_body> req(method, path, 11);
    const std::string h = host.value_or("127.0.0.1:" + std::to_string(gateway_->admin_port()));
    if (!h.empty()) req.set(http::field::host, h);
    const std::string a = header.value_or("1");
    if (!a.empty()) req.set(kAdminHeader, a);
    for (const auto& [k, v] : extra) req.set(k, v);
    if (!extra.empty()) req.body() = "offset=0";  // a form's body
    req.prepare_payload();
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

// Issue 36, item 9: a page in a browser must not reach the admin routes. A form post (no custom header
// possible) from any site, and a page whose DNS name was rebound to 127.0.0.1 (its own name in Host), are
// refused; /healthz and /metrics stay open to anything, as monitoring expects.
TEST_F(GatewayProtocolTest, AdminRoutesRefuseFormPostsAndReboundNames) {
  namespace http = boost::beast::http;
  const std::string port = std::to_string(gateway_->admin_port());
  auto form =
      admin(http::verb::post, "/admin/poke", {}, "",
            {{"Content-Type", "application/x-www-form-urlencoded"}, {"Origin", "http://evil.example"}});
  EXPECT_EQ(form.status, 403u) << form.body;
  EXPECT_NE(form.body, "poked\n");
  EXPECT_EQ(admin(http::verb::get, "/admin/poke", {}, "").status, 403u) << "no header: refused before 405";
  EXPECT_EQ(admin(http::verb::post, "/admin/poke", "evil.example:" + port).status, 403u);
  EXPECT_EQ(admin(http::verb::post, "/admin/poke", "127.0.0.1:1").status, 403u);
  EXPECT_EQ(admin(http::verb::post, "/admin/poke", "").status, 403u);
  EXPECT_EQ(admin(http::verb::post, "/admin/poke", "localhost:" + port).body, "poked\n");
  EXPECT_EQ(admin(http::verb::post, "/admin/poke", "[::1]:" + port).body, "poked\n");
  // Monitoring needs neither.
  EXPECT_EQ(admin(http::verb::get, "/healthz", "monitor.example", "").status, 200u);
  EXPECT_EQ(admin(http::verb::get, "/metrics", "", "").status, 200u);
}

}  // namespace
}  // namespace qim
