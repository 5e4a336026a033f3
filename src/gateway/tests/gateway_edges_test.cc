// Protocol edges of issue 36 through a real gateway: a token's expiry ends its connection (item 6); a
// RATE_LIMITED for a large frame still carries its ref, a frame header over the limit closes at once,
// what is no JSON number is BAD_FRAME, and connections that have not authenticated are bounded apart
// (item 10).
#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <thread>
#include <vector>

#include "client/client.h"
#include "gateway/gateway.h"
#include "gateway/tests/gateway_harness.h"

namespace qim {
namespace {

using namespace std::chrono_literals;
using client::Client;
using client::ServerFrame;

constexpr const char* kSecret = "gateway-edges-test-secret";
constexpr auto kWait = 5s;
constexpr auto kQuiet = 300ms;  // how long we wait to see that something does NOT arrive

namespace net = boost::asio;
namespace websocket = boost::beast::websocket;

class GatewayEdgesTest : public testing::GatewayHarness {
 protected:
  GatewayEdgesTest() : GatewayHarness(kSecret) {}
  void SetUp() override { start({}); }

  std::unique_ptr<Client> login_for(std::string_view user, int64_t ttl_ms) {
    auto c = connect();
    auto ok = c->auth(token(user, "d1", ttl_ms));
    EXPECT_TRUE(ok.ok()) << ok.error().to_string();
    return c;
  }

  void push_to(const std::string& user, uint64_t offset, const std::string& body) {
    const UserId u = *UserId::parse(user);
    const ShardId shard = ShardMap::create(shard_count_)->shard_of(u);
    MailboxEntry e;
    e.user = u;
    e.seq = compose(Epoch{1}, Offset{offset}).value();
    e.message.id = MessageId{offset};
    e.message.body = body;
    MailboxSeq from = offset > 1 ? compose(Epoch{1}, Offset{offset - 1}).value() : MailboxSeq{};
    gateway_->notifier().entries_visible(shard, from, e.seq, std::span(&e, 1));
  }
};

TEST_F(GatewayEdgesTest, APushAfterTheTokensExpiryIsNotSentAndTheConnectionCloses) {
  auto alice = login_for("alice", 60'000);
  push_to("alice", 1, "while valid");
  auto first = alice->wait_type("DELIVER", kWait);
  ASSERT_TRUE(first.ok()) << first.error().to_string();

  clock_->advance_ms(60'001);  // the gateway's clock passes the expiry before its timer fires
  push_to("alice", 2, "after expiry");
  auto late = alice->wait_type("DELIVER", kWait);
  EXPECT_FALSE(late.ok()) << "pushed after the token expired: " << late->raw;
  EXPECT_TRUE(alice->closed());
  EXPECT_EQ(alice->close_code(), 1008);
  EXPECT_NE(alice->close_reason().find("token expired"), std::string::npos) << alice->close_reason();
}

TEST_F(GatewayEdgesTest, ASilentConnectionIsClosedAtItsTokensExpiry) {
  auto alice = login_for("alice", 1000);
  clock_->advance_ms(1000);
  // Nothing is sent by the client: the gateway's own timer ends the connection.
  auto e = alice->wait_type("ERROR", kWait);
  ASSERT_TRUE(e.ok()) << e.error().to_string();
  EXPECT_EQ(e->code, "UNAUTHENTICATED") << e->raw;
  EXPECT_NE(e->message.find("token expired"), std::string::npos) << e->raw;
  EXPECT_EQ(alice->wait_type("never", kWait).code(), Errc::kTransport);
  EXPECT_EQ(alice->close_code(), 1008);
  EXPECT_NE(alice->close_reason().find("token expired"), std::string::npos) << alice->close_reason();
  // Its registration is gone: a push for the user finds no connection.
  push_to("alice", 1, "nobody");
}

TEST_F(GatewayEdgesTest, ARateLimitedLargeSendCarriesItsRef) {
  start([](GatewayOptions& o) { o.max_frames_per_second = 5; });
  auto c = login("alice");
  for (int i = 0; i < 10; ++i) c->send_text(client::ping_frame("p" + std::to_string(i)));
  // A SEND with a 16 KiB body right after the burst: a frame over 1 KiB, which the rate limiter used to
  // drop without reading its ref.
  c->send_text(client::send_frame("bob", "big", std::string(16 * 1024, 'x'), "s-big"));
  auto answer = c->wait_ref("s-big", kWait);
  ASSERT_TRUE(answer.ok()) << "the dropped SEND's RATE_LIMITED came without its ref: "
                           << answer.error().to_string();
  EXPECT_EQ(answer->code, "RATE_LIMITED") << answer->raw;
}

TEST_F(GatewayEdgesTest, WhatIsNoJsonNumberIsABadFrame) {
  auto c = login("alice");
  for (const std::string frame :
       {R"({"type":"SYNC","ref":"n","after":-Infinity})", R"({"type":"SYNC","ref":"n","after":Infinity})"}) {
    c->send_text(frame);
    auto e = c->wait_type("ERROR", kWait);
    ASSERT_TRUE(e.ok()) << e.error().to_string();
    EXPECT_EQ(e->code, "BAD_FRAME") << frame << " -> " << e->raw;
  }
}

// A raw WebSocket that sends one frame header (masked, no payload) and reports how the gateway closes.
struct HeaderOutcome {
  bool closed = false;
  int code = 0;
  std::string reason;
};
HeaderOutcome send_header_only(uint16_t port, uint8_t opcode_byte, uint64_t length) {
  net::io_context io;
  websocket::stream<net::ip::tcp::socket> ws(io);
  ws.next_layer().connect({net::ip::make_address("127.0.0.1"), port});
  ws.handshake("127.0.0.1", "/");
  std::vector<uint8_t> head{opcode_byte, 0x80 | 127};
  for (int i = 7; i >= 0; --i) head.push_back(static_cast<uint8_t>(length >> (8 * i)));
  for (uint8_t k : {1, 2, 3, 4}) head.push_back(k);  // the mask key; no payload follows
  net::write(ws.next_layer(), net::buffer(head));
  HeaderOutcome out;
  boost::beast::flat_buffer buf;
  ws.async_read(buf, [&](boost::beast::error_code ec, size_t) {
    out.closed = ec == websocket::error::closed;
    out.code = ws.reason().code;
    out.reason = ws.reason().reason.c_str();
  });
  io.run_for(kWait);
  return out;
}

TEST_F(GatewayEdgesTest, AFrameHeaderOverTheLimitClosesAtTheHeader) {
  auto alice = login("alice");  // the gateway keeps serving others
  const uint64_t kib100 = 100 * 1024;
  for (uint64_t length : {kib100, uint64_t{1} << 62}) {
    auto o = send_header_only(gateway_->port(), 0x81, length);
    EXPECT_TRUE(o.closed) << length << ": not closed before the payload";
    EXPECT_EQ(o.code, 1009) << length;
    EXPECT_NE(o.reason.find("frame over 98304 bytes"), std::string::npos) << o.reason;
  }
  // RFC 6455: the most significant bit of a 64-bit length must be 0.
  auto o = send_header_only(gateway_->port(), 0x81, (uint64_t{1} << 63) | 5);
  EXPECT_TRUE(o.closed) << "not closed on the forbidden length";
  EXPECT_EQ(o.code, 1002);
  EXPECT_NE(o.reason.find("protocol error"), std::string::npos) << o.reason;
  alice->send_text(client::ping_frame("still"));
  EXPECT_TRUE(alice->wait_ref("still", kWait).ok());
}

TEST_F(GatewayEdgesTest, UnauthenticatedConnectionsAreBoundedPerPeerAndFreeTheirSlotAtAuth) {
  start([](GatewayOptions& o) {
    o.max_unauthenticated_per_peer = 3;
    o.max_unauthenticated = 100;
  });
  net::io_context io;
  auto raw = [&] {
    auto s = std::make_unique<net::ip::tcp::socket>(io);
    s->connect({net::ip::make_address("127.0.0.1"), gateway_->port()});
    return s;
  };
  // Closed by the gateway (EOF) within the wait, rather than left open.
  auto closed_at_once = [&](net::ip::tcp::socket& s) {
    char byte = 0;
    bool eof = false;
    s.async_read_some(net::buffer(&byte, 1), [&](boost::system::error_code ec, size_t) { eof = !!ec; });
    io.restart();
    io.run_for(kWait);
    return eof;
  };
  std::vector<std::unique_ptr<net::ip::tcp::socket>> idle;
  for (int i = 0; i < 3; ++i) idle.push_back(raw());  // never send an upgrade request
  auto fourth = raw();
  EXPECT_TRUE(closed_at_once(*fourth)) << "a fourth unauthenticated connection from one peer was kept";
  client::ClientOptions co;
  co.port = gateway_->port();
  EXPECT_FALSE(Client::connect(co).ok()) << "a WebSocket was accepted over the per-peer bound";

  idle.clear();  // their slots come back when the gateway sees them go
  std::vector<std::unique_ptr<Client>> users;
  for (int i = 0; i < 20 && users.size() < 5; ++i) {
    auto c = Client::connect(co);
    if (!c.ok()) {
      std::this_thread::sleep_for(50ms);
      continue;
    }
    ASSERT_TRUE((*c)->auth(token("user" + std::to_string(users.size()))).ok());
    users.push_back(std::move(c).value());
  }
  // Authenticated connections no longer count: five of them from the one peer, over the bound of 3.
  EXPECT_EQ(users.size(), 5u);
}

}  // namespace
}  // namespace qim
