// The gateway over real WebSocket connections, with an in-memory Outbox, the memory mailbox store and a
// fake history: everything SYSTEM.md asks of the client-facing side that can be checked in one process.
#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <map>
#include <random>

#include "auth/token.h"
#include "client/client.h"
#include "gateway/admin_server.h"
#include "gateway/gateway.h"
#include "gateway/tests/gateway_harness.h"
#include "outbox/outbox_record.h"

namespace qim {
namespace {

using namespace std::chrono_literals;
using client::Client;
using client::ServerFrame;

constexpr const char* kSecret = "gateway-test-secret";
constexpr auto kWait = 5s;
constexpr auto kQuiet = 300ms;  // how long we wait to see that something does NOT arrive

class FakeHistory final : public HistoryStore {
 public:
  Status append(const Message& m) override {
    std::lock_guard lock(mu_);
    by_conv_[m.conversation.str()][m.id.value] = m;
    return {};
  }
  Result<HistoryPage> read(const HistoryQuery& q) override {
    if (q.limit < 1 || q.limit > 200) return Error(Errc::kInvalidArgument, "limit outside 1..200");
    std::lock_guard lock(mu_);
    HistoryPage page;
    auto& msgs = by_conv_[q.conversation.str()];
    for (auto it = msgs.rbegin(); it != msgs.rend(); ++it) {
      if (q.before && it->first >= q.before->value) continue;
      if (page.messages.size() == q.limit) {
        page.more = true;
        break;
      }
      page.messages.push_back(it->second);
    }
    return page;
  }
  OpCounts op_counts() const override { return {}; }

 private:
  std::mutex mu_;
  std::map<std::string, std::map<uint64_t, Message>> by_conv_;
};

class GatewayTest : public testing::GatewayHarness {
 protected:
  GatewayTest() : GatewayHarness(kSecret) {}
  void SetUp() override { start({}); }

  void configure(GatewayOptions& o, GatewayDeps& d) override {
    o.max_body_bytes = 1024;
    o.max_frame_bytes = 4096;
    d.history = &history_;
  }

  // Materialises `m` into the mailboxes of `users` the way a MailboxNode would, and returns the entries.
  std::vector<MailboxEntry> materialise(const Message& m, const std::vector<std::string>& users) {
    auto shards = *ShardMap::create(16);
    std::map<uint32_t, std::vector<UserId>> by_shard;
    for (const auto& u : users) {
      auto id = *UserId::parse(u);
      by_shard[shards.shard_of(id).value].push_back(id);
    }
    std::vector<MailboxEntry> out;
    for (auto& [shard, recipients] : by_shard) {
      Offset offset{next_offset_[shard]++};
      auto id = *DispatchId::parse("m" + std::to_string(m.id.value) + "s" + std::to_string(shard));
      auto identity = make_identity(id, m, {recipients});
      auto begun = store_->begin_dispatch(ShardId{shard}, Epoch{1}, identity, offset);
      EXPECT_TRUE(begun.ok()) << begun.error().to_string();
      ChunkWrite w{id, 0, &m, recipients};
      EXPECT_TRUE(store_->write_chunks(ShardId{shard}, Epoch{1}, {&w, 1}).ok());
      auto marks = *store_->lane_watermarks(ShardId{shard}, Epoch{1});
      auto done =
          store_->finish_dispatch(ShardId{shard}, Epoch{1}, id, uniform_advances(marks[0], begun->seq));
      EXPECT_TRUE(done.ok()) << done.error().to_string();
      for (const auto& r : recipients) out.push_back(MailboxEntry{r, begun->seq, m});
    }
    return out;
  }

  Message message(uint64_t id, const char* from, const char* to, const char* body) {
    auto a = *UserId::parse(from);
    auto b = *UserId::parse(to);
    return Message{MessageId{id},
                   *direct_conversation(a, b),
                   a,
                   *DeviceId::parse("d1"),
                   "c" + std::to_string(id),
                   clock_->now_ms(),
                   body};
  }

  // Reports `entries` to the gateway as the next move of shard 0's frontier (a chained range).
  void notify(const std::vector<MailboxEntry>& entries) {
    const MailboxSeq to = std::max(entries.back().seq, MailboxSeq::from_raw(chain_end_.raw() + 1));
    gateway_->notifier().entries_visible(ShardId{0}, chain_end_, to, entries);
    chain_end_ = to;
  }

  // GET `path` on the admin port; `as_admin`: with the header and Host the guarded routes ask for.
  std::string admin_get(const std::string& path, bool as_admin = false) {
    namespace net = boost::asio;
    namespace http = boost::beast::http;
    net::io_context io;
    net::ip::tcp::socket s(io);
    s.connect({net::ip::make_address("127.0.0.1"), gateway_->admin_port()});
    http::request<http::empty_body> req(http::verb::get, path, 11);
    req.set(http::field::host,
            as_admin ? "127.0.0.1:" + std::to_string(gateway_->admin_port()) : "127.0.0.1");
    if (as_admin) req.set(kAdminHeader, "1");
    http::write(s, req);
    boost::beast::flat_buffer buf;
    http::response<http::string_body> res;
    http::read(s, buf, res);
    return std::to_string(res.result_int()) + " " + res.body();
  }

  FakeHistory history_;
  std::map<uint32_t, uint64_t> next_offset_;
  MailboxSeq chain_end_;
};

TEST_F(GatewayTest, AuthAcceptsAValidTokenAndRefusesOthersWithClearErrors) {
  auto ok = connect()->auth(token("alice", "phone"));
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  EXPECT_EQ(ok->type, "AUTH_OK");
  EXPECT_EQ(ok->user, "alice");
  EXPECT_EQ(ok->device, "phone");

  auto bad = connect();
  auto refused = bad->auth("bad.token");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message().rfind("UNAUTHENTICATED: token malformed", 0), 0u)
      << refused.error().message();
  EXPECT_TRUE(bad->wait_for([](const ServerFrame&) { return false; }, kWait).code() == Errc::kTransport);
  EXPECT_EQ(bad->close_code(), 1008);

  auto expired_token = token("alice", "phone", 1000);
  clock_->advance_ms(1000);
  auto expired = connect()->auth(expired_token);
  ASSERT_FALSE(expired.ok());
  EXPECT_NE(expired.error().message().find("token expired"), std::string::npos);

  auto forged = connect()->auth(
      *mint_token("another-secret", *UserId::parse("alice"), *DeviceId::parse("d"), 1000, *clock_));
  ASSERT_FALSE(forged.ok());
  EXPECT_NE(forged.error().message().find("signature does not match"), std::string::npos);
}

TEST_F(GatewayTest, ATokenThatExpiresWhileConnectedEndsTheConnection) {
  auto c = connect();
  ASSERT_TRUE(c->auth(token("alice", "d1", 60'000)).ok());
  ASSERT_TRUE(c->send("bob", "before", "x").ok());
  clock_->advance_ms(60'000);
  auto r = c->send("bob", "after", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("token expired"), std::string::npos) << r.error().message();
  EXPECT_EQ(c->wait_type("never", kWait).code(), Errc::kTransport);
  EXPECT_EQ(c->close_code(), 1008);
  EXPECT_EQ(log_.total_records(), 1u);
}

TEST_F(GatewayTest, NothingButAuthBeforeAuth) {
  auto c = connect();
  auto r = c->send("bob", "c1", "hi");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message().rfind("UNAUTHENTICATED", 0), 0u);
  EXPECT_EQ(log_.total_records(), 0u);
  EXPECT_EQ(c->wait_type("never", kWait).code(), Errc::kTransport);  // closed by the server
}

TEST_F(GatewayTest, SendAckOnlyAfterTheAppendIsDurableAndCarriesTheOutboxId) {
  auto alice = login("alice");
  log_.hold(true);
  alice->send_text(client::send_frame("bob", "c1", "hello", "s1"));
  EXPECT_EQ(alice->wait_ref("s1", kQuiet).code(), Errc::kTimeout);  // appended, not durable: no ack
  ASSERT_EQ(log_.held(), 1u);
  log_.release();
  auto ack = alice->wait_ref("s1", kWait);
  ASSERT_TRUE(ack.ok()) << ack.error().to_string();
  ASSERT_EQ(ack->type, "SEND_ACK") << ack->raw;
  EXPECT_EQ(ack->client_msg_id, "c1");
  EXPECT_EQ(ack->conversation, "d:alice:bob");
  EXPECT_EQ(ack->server_time, clock_->now_ms());

  auto records = log_.all_records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(ack->message_id, message_id_of(records[0].partition, records[0].offset).value);
  auto rec = *decode_outbox_record(records[0].value);
  EXPECT_EQ(rec.sender.str(), "alice");  // the principal, not anything the client said
  EXPECT_EQ(rec.sender_device.str(), "d1");
  EXPECT_EQ(rec.body, "hello");
  EXPECT_EQ(records[0].partition, outbox_partition_of(rec.conversation, 4));
}

TEST_F(GatewayTest, StopAnswersEveryInFlightSendBeforeClosing) {
  auto alice = login("alice");
  log_.hold(true);
  alice->send_text(client::send_frame("bob", "c1", "in flight", "s1"));
  while (log_.held() == 0) std::this_thread::sleep_for(1ms);
  std::thread stopper([this] { gateway_->stop(); });
  std::this_thread::sleep_for(200ms);  // stop() is now waiting for the append
  log_.release();
  stopper.join();
  auto ack = alice->wait_ref("s1", kWait);
  ASSERT_TRUE(ack.ok()) << "the SEND was not answered before the close: " << ack.error().to_string();
  EXPECT_EQ(ack->type, "SEND_ACK");
  EXPECT_EQ(alice->wait_type("never", kWait).code(), Errc::kTransport);
  EXPECT_EQ(alice->close_code(), 1001);  // going away
}

TEST_F(GatewayTest, AFailedAppendIsAnErrorAndTheKeyStaysFree) {
  auto alice = login("alice");
  log_.hold(true);
  alice->send_text(client::send_frame("bob", "c1", "hello", "s1"));
  while (log_.held() == 0) std::this_thread::sleep_for(1ms);
  log_.fail_held(Error(Errc::kIo, "disk full"));
  auto err = alice->wait_ref("s1", kWait);
  ASSERT_TRUE(err.ok());
  EXPECT_EQ(err->type, "ERROR");
  EXPECT_EQ(err->code, "UNAVAILABLE");
  log_.hold(false);
  auto retry = alice->send("bob", "c1", "hello");
  ASSERT_TRUE(retry.ok()) << retry.error().to_string();
  EXPECT_FALSE(retry->duplicate);
}

TEST_F(GatewayTest, IdempotentSendGivesOneMessageIdAndOneRecord) {
  auto alice = login("alice");
  auto first = alice->send("bob", "same", "hi");
  ASSERT_TRUE(first.ok());
  auto second = alice->send("bob", "same", "hi");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first->message_id, second->message_id);
  EXPECT_EQ(first->server_time, second->server_time);
  EXPECT_TRUE(second->duplicate);
  EXPECT_EQ(log_.total_records(), 1u);

  // Another device of the same user retrying the same key: still the same message.
  auto tablet = login("alice", "tablet");
  auto third = tablet->send("bob", "same", "hi");
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->message_id, first->message_id);
  // Another user may use the same key freely.
  auto carol = login("carol");
  auto other = carol->send("bob", "same", "hi");
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->message_id, first->message_id);
  // The same key with other content is refused, not silently mapped.
  auto changed = alice->send("bob", "same", "something else");
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.error().message().find("already used"), std::string::npos);
  EXPECT_EQ(log_.total_records(), 2u);
}

TEST_F(GatewayTest, AConcurrentDuplicateWaitsForTheFirst) {
  auto alice = login("alice");
  log_.hold(true);
  alice->send_text(client::send_frame("bob", "k", "hi", "a"));
  alice->send_text(client::send_frame("bob", "k", "hi", "b"));
  EXPECT_EQ(alice->wait_ref("a", kQuiet).code(), Errc::kTimeout);
  EXPECT_EQ(alice->wait_ref("b", 1ms).code(), Errc::kTimeout);
  EXPECT_EQ(log_.held(), 1u);  // the duplicate did not append
  log_.release();
  auto a = alice->wait_ref("a", kWait);
  auto b = alice->wait_ref("b", kWait);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->message_id, b->message_id);
  EXPECT_EQ(log_.total_records(), 1u);
}

TEST_F(GatewayTest, TheIdempotencyTableSurvivesARestartThroughTheOutbox) {
  auto first = login("alice")->send("bob", "k1", "hi");
  ASSERT_TRUE(first.ok());
  start({});  // a new gateway over the same Outbox
  auto again = login("alice")->send("bob", "k1", "hi");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->message_id, first->message_id);
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(log_.total_records(), 1u);
}

TEST_F(GatewayTest, PushesVisibleEntriesToEveryDeviceOfTheirUserOnly) {
  auto bob_phone = login("bob", "phone");
  auto bob_laptop = login("bob", "laptop");
  auto carol = login("carol");
  auto entries = materialise(message(7, "alice", "bob", "hey"), {"bob"});
  notify(entries);
  for (auto* c : {bob_phone.get(), bob_laptop.get()}) {
    auto d = c->wait_type("DELIVER", kWait);
    ASSERT_TRUE(d.ok()) << d.error().to_string();
    ASSERT_EQ(d->entries.size(), 1u);
    EXPECT_EQ(d->entries[0].seq, entries[0].seq.raw());
    EXPECT_EQ(d->entries[0].message_id, 7u);
    EXPECT_EQ(d->entries[0].sender, "alice");
    EXPECT_EQ(d->entries[0].body, "hey");
  }
  EXPECT_EQ(carol->wait_type("DELIVER", kQuiet).code(), Errc::kTimeout);
}

TEST_F(GatewayTest, SyncReadsTheAuthenticatedUsersMailboxOnly) {
  auto e1 = materialise(message(1, "alice", "bob", "one"), {"bob", "alice"});
  auto e2 = materialise(message(2, "alice", "bob", "two"), {"bob", "alice"});
  auto bob = login("bob");
  auto page = bob->sync(0, 100);
  ASSERT_TRUE(page.ok()) << page.error().to_string();
  ASSERT_EQ(page->entries.size(), 2u);
  EXPECT_EQ(page->entries[0].body, "one");
  EXPECT_EQ(page->entries[1].body, "two");
  EXPECT_LT(page->entries[0].seq, page->entries[1].seq);
  EXPECT_FALSE(page->more);
  auto after = bob->sync(page->entries[0].seq, 100);
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->entries.size(), 1u);
  EXPECT_EQ(after->entries[0].body, "two");
  auto limited = bob->sync(0, 1);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->entries.size(), 1u);
  EXPECT_TRUE(limited->more);

  auto carol = login("carol");
  auto none = carol->sync(0, 100);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->entries.empty());
  // There is no field to name another user's mailbox; an unknown field is ignored, never obeyed.
  carol->send_text(R"({"type":"SYNC","user":"bob","ref":"x"})");
  auto still_none = carol->wait_ref("x", kWait);
  ASSERT_TRUE(still_none.ok());
  EXPECT_TRUE(still_none->entries.empty());
}

TEST_F(GatewayTest, HistoryOnlyForMembers) {
  auto m1 = message(1, "alice", "bob", "one");
  auto m2 = message(2, "alice", "bob", "two");
  ASSERT_TRUE(history_.append(m1).ok());
  ASSERT_TRUE(history_.append(m2).ok());
  auto alice = login("alice");
  auto page = alice->history("d:alice:bob", std::nullopt, 1);
  ASSERT_TRUE(page.ok()) << page.error().to_string();
  ASSERT_EQ(page->entries.size(), 1u);
  EXPECT_EQ(page->entries[0].body, "two");
  EXPECT_TRUE(page->more);
  auto older = alice->history("d:alice:bob", page->entries[0].message_id, 10);
  ASSERT_TRUE(older.ok());
  ASSERT_EQ(older->entries.size(), 1u);
  EXPECT_EQ(older->entries[0].body, "one");

  auto carol = login("carol");
  auto denied = carol->history("d:alice:bob", std::nullopt, 10);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().message().rfind("FORBIDDEN", 0), 0u);
}

TEST_F(GatewayTest, BadInputGetsStableErrorsAndTheConnectionKeepsServing) {
  auto alice = login("alice");
  struct Case {
    std::string frame;
    const char* code;
  };
  std::vector<Case> cases = {
      {"not json", "BAD_FRAME"},
      {R"({"type":"DANCE","ref":"r"})", "UNKNOWN_TYPE"},
      {R"({"type":"SEND","client_msg_id":"c","to":"bob","body":")" + std::string(1025, 'x') + "\"}",
       "TOO_LARGE"},
      {R"({"type":"SEND","client_msg_id":"c","to":"bob","body":5})", "INVALID_ARGUMENT"},
      {R"({"type":"SEND","client_msg_id":"c","to":"bob","body":"x","sender":"bob"})", "FORBIDDEN"},
      {R"({"type":"SEND","client_msg_id":"c","conversation":"d:bob:carol","body":"x"})", "FORBIDDEN"},
      {R"({"type":"AUTH","token":"x"})", "INVALID_ARGUMENT"},  // already authenticated
  };
  for (const auto& c : cases) {
    alice->send_text(c.frame);
    auto e = alice->wait_type("ERROR", kWait);
    ASSERT_TRUE(e.ok()) << c.frame << ": " << e.error().to_string();
    EXPECT_EQ(e->code, c.code) << c.frame << " -> " << e->raw;
    EXPECT_FALSE(e->message.empty());
  }
  alice->send_binary("\x01\x02");
  auto bin = alice->wait_type("ERROR", kWait);
  ASSERT_TRUE(bin.ok());
  EXPECT_EQ(bin->code, "BAD_FRAME");
  EXPECT_EQ(log_.total_records(), 0u);  // nothing stored
  auto ok = alice->send("bob", "fine", "still serving");
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
}

TEST_F(GatewayTest, RandomFramesNeverStopTheServer) {
  // Random bytes as text and binary frames, before and after AUTH, from several connections. Invalid
  // UTF-8 in a text frame makes Beast close that connection (1007); anything else gets an ERROR.
  std::mt19937_64 rng(20260928);
  for (int conn = 0; conn < 8; ++conn) {
    auto c = conn % 2 ? login("fuzzer") : connect();
    for (int i = 0; i < 200; ++i) {
      std::string bytes(rng() % 300, '\0');
      for (auto& b : bytes) b = static_cast<char>(rng() % (conn < 4 ? 128 : 256));
      if (rng() % 5 == 0) {
        c->send_binary(bytes);
      } else {
        c->send_text(bytes);
      }
    }
    (void)c->wait_type("never", 100ms);
  }
  EXPECT_EQ(log_.total_records(), 0u);
  auto ok = login("alice")->send("bob", "after-the-storm", "still here");
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
}

TEST_F(GatewayTest, AFrameOverTheLimitClosesWith1009AndOthersAreServed) {
  auto big = login("alice");
  big->send_text(std::string(5000, ' '));
  EXPECT_EQ(big->wait_type("never", kWait).code(), Errc::kTransport);
  EXPECT_EQ(big->close_code(), 1009);
  EXPECT_TRUE(login("bob")->send("alice", "c", "hi").ok());
}

TEST_F(GatewayTest, FramesOverTheRateAreRefused) {
  start([](GatewayOptions& o) { o.max_frames_per_second = 5; });
  auto c = connect();
  ASSERT_TRUE(c->auth(token("alice")).ok());
  for (int i = 0; i < 20; ++i) c->send_text(client::ping_frame("p" + std::to_string(i)));
  auto limited = c->wait_for([](const ServerFrame& f) { return f.code == "RATE_LIMITED"; }, kWait);
  ASSERT_TRUE(limited.ok()) << limited.error().to_string();
}

TEST_F(GatewayTest, ConnectionsOverTheBoundAreRefused) {
  start([](GatewayOptions& o) { o.max_connections = 2; });
  auto a = connect();
  auto b = connect();
  client::ClientOptions o;
  o.port = gateway_->port();
  auto third = Client::connect(o);
  ASSERT_FALSE(third.ok());
  a.reset();
  for (int i = 0; i < 100; ++i) {
    if (Client::connect(o).ok()) return;
    std::this_thread::sleep_for(20ms);
  }
  FAIL() << "a freed slot was never reused";
}

TEST_F(GatewayTest, ASlowConsumerIsClosedWithAClearReason) {
  start([](GatewayOptions& o) { o.max_outbound_frames = 2; });
  auto bob = login("bob");
  auto entries = materialise(message(9, "alice", "bob", "x"), {"bob"});
  // More pushes in one burst than the queue holds: the connection cannot drain them that fast.
  for (int i = 0; i < 2000; ++i) notify(entries);
  EXPECT_EQ(bob->wait_type("never", kWait).code(), Errc::kTransport);
  EXPECT_EQ(bob->close_code(), 1013);
  EXPECT_NE(bob->close_reason().find("slow consumer"), std::string::npos);
}

TEST_F(GatewayTest, ASlowConsumerIsAlsoBoundedInBytes) {
  start([](GatewayOptions& o) { o.max_outbound_bytes = o.max_frame_bytes; });
  auto bob = login("bob");
  auto entries = materialise(message(9, "alice", "bob", std::string(1000, 'x').c_str()), {"bob"});
  for (int i = 0; i < 2000; ++i) notify(entries);
  EXPECT_EQ(bob->wait_type("never", kWait).code(), Errc::kTransport);
  EXPECT_EQ(bob->close_code(), 1013);
  EXPECT_NE(bob->close_reason().find("bytes queued"), std::string::npos) << bob->close_reason();
}

TEST_F(GatewayTest, ALargeSyncPageIsNotMistakenForASlowConsumer) {
  start([](GatewayOptions& o) { o.max_outbound_bytes = o.max_frame_bytes; });
  for (uint64_t i = 1; i <= 8; ++i)
    materialise(message(i, "alice", "bob", std::string(1000, 'x').c_str()), {"bob"});
  auto bob = login("bob");
  auto page = bob->sync(0, 100);  // about 9 KB in one frame, over the 4 KB queue bound
  ASSERT_TRUE(page.ok()) << page.error().to_string();
  EXPECT_EQ(page->entries.size(), 8u);
  EXPECT_FALSE(bob->closed());
}

TEST_F(GatewayTest, PullModePushesNothingAndPushModeRefusesSync) {
  start([](GatewayOptions& o) { o.delivery_mode = "pull"; });
  auto bob = login("bob");
  auto entries = materialise(message(3, "alice", "bob", "x"), {"bob"});
  notify(entries);
  EXPECT_EQ(bob->wait_type("DELIVER", kQuiet).code(), Errc::kTimeout);
  ASSERT_TRUE(bob->sync(0).ok());

  start([](GatewayOptions& o) { o.delivery_mode = "push"; });
  auto bob2 = login("bob");
  EXPECT_FALSE(bob2->sync(0).ok());
  notify(entries);
  EXPECT_TRUE(bob2->wait_type("DELIVER", kWait).ok());
}

TEST_F(GatewayTest, AdminServesHealthAndMetrics) {
  ASSERT_TRUE(login("alice")->send("bob", "c", "x").ok());
  EXPECT_EQ(admin_get("/healthz"), "200 ok\n");
  auto metrics = admin_get("/metrics");
  EXPECT_EQ(metrics.rfind("200 ", 0), 0u);
  EXPECT_NE(metrics.find("qim_gateway_sends_acked_total 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("qim_gateway_errors_total{code=\"BAD_FRAME\"}"), std::string::npos);
  // Past /healthz and /metrics the guard of decision 59 comes first: an unknown path is 403 without the
  // admin header, 404 with it.
  EXPECT_EQ(admin_get("/nope").rfind("403", 0), 0u);
  EXPECT_EQ(admin_get("/nope", true).rfind("404", 0), 0u);
}

TEST_F(GatewayTest, BadOptionsAreConfigErrors) {
  GatewayOptions o;
  o.port = 0;
  o.admin_port = 0;
  GatewayDeps d{&log_, store_.get(), &history_, clock_};
  EXPECT_EQ(make_gateway(o, d)->start().code(), Errc::kConfig);  // no secret
  o.auth_secret = "s";
  o.delivery_mode = "sometimes";
  EXPECT_EQ(make_gateway(o, d)->start().code(), Errc::kConfig);
}

}  // namespace
}  // namespace qim
