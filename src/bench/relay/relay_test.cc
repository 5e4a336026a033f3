// The relay speaks the client protocol: AUTH as the gateway checks it, SEND -> SEND_ACK, and a DELIVER to
// every live connection of the recipient and of the sender; and qim-load's own run counts every message
// of a step through it as delivered.
#include "bench/relay/relay.h"

#include <gtest/gtest.h>

#include <thread>

#include "auth/token.h"
#include "bench/load/load_run.h"
#include "client/client.h"

namespace qim::relay {
namespace {

constexpr auto kWait = std::chrono::seconds(10);
const std::string kSecret = "relay-test-secret";

class RelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RelayOptions o;
    o.port = 0;
    o.auth_secret = kSecret;
    o.threads = 2;
    auto r = Relay::start(o, clock_);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    relay_ = std::move(r).value();
  }

  std::unique_ptr<client::Client> login(const std::string& user, const std::string& device,
                                        std::string secret = kSecret) {
    client::ClientOptions co;
    co.port = relay_->port();
    auto c = client::Client::connect(co);
    EXPECT_TRUE(c.ok()) << c.error().to_string();
    auto token = mint_token(secret, *UserId::parse(user), *DeviceId::parse(device), 3'600'000, *clock_);
    EXPECT_TRUE(token.ok());
    auth_ = (*c)->auth(*token);
    return std::move(c).value();
  }

  std::shared_ptr<SystemClock> clock_ = std::make_shared<SystemClock>();
  std::unique_ptr<Relay> relay_;
  Result<client::ServerFrame> auth_ = Error(Errc::kInvariant, "no AUTH yet");
};

TEST_F(RelayTest, RelaysASendToEveryLiveConnectionOfRecipientAndSender) {
  auto bob_phone = login("bob", "phone");
  ASSERT_TRUE(auth_.ok()) << auth_.error().to_string();
  EXPECT_EQ(auth_->delivery, "push");
  auto bob_laptop = login("bob", "laptop");
  auto alice = login("alice", "phone");
  auto alice_tablet = login("alice", "tablet");
  ASSERT_TRUE(auth_.ok());

  for (int i = 1; i <= 3; ++i) {
    auto ack = alice->send("bob", "c-" + std::to_string(i), "hello " + std::to_string(i));
    ASSERT_TRUE(ack.ok()) << ack.error().to_string();
    EXPECT_EQ(ack->type, "SEND_ACK");
    EXPECT_EQ(ack->client_msg_id, "c-" + std::to_string(i));
    EXPECT_EQ(ack->conversation, "d:alice:bob");
    EXPECT_FALSE(ack->duplicate);
  }
  // Each of bob's devices, and alice's other device, sees the three in order, as a checkable chain.
  for (auto* c : {bob_phone.get(), bob_laptop.get(), alice_tablet.get()}) {
    uint64_t cursor = 0;
    for (int i = 1; i <= 3; ++i) {
      auto d = c->wait_type("DELIVER", kWait);
      ASSERT_TRUE(d.ok()) << d.error().to_string();
      ASSERT_EQ(d->entries.size(), 1u);
      EXPECT_EQ(d->entries[0].body, "hello " + std::to_string(i));
      EXPECT_EQ(d->entries[0].sender, "alice");
      EXPECT_EQ(d->entries[0].sender_device, "phone");
      ASSERT_TRUE(d->from.has_value());
      EXPECT_EQ(*d->from, cursor);
      EXPECT_GT(d->frontier, cursor);
      cursor = d->frontier;
    }
  }
  EXPECT_EQ(relay_->stats().sends, 3u);
  // Four live connections of the two users, minus none: every one got every message (the sending
  // connection included, as the gateway pushes the sender's own mailbox entry to it).
  EXPECT_EQ(relay_->stats().delivers, 12u);
}

TEST_F(RelayTest, RefusesATokenOfAnotherSecretAndFramesBeforeAuth) {
  auto mallory = login("mallory", "phone", "another-secret");
  ASSERT_FALSE(auth_.ok());
  EXPECT_NE(auth_.error().message().find("UNAUTHENTICATED"), std::string::npos) << auth_.error().message();

  client::ClientOptions co;
  co.port = relay_->port();
  auto c = client::Client::connect(co);
  ASSERT_TRUE(c.ok());
  (*c)->send_text(client::send_frame("bob", "c-1", "hi", "s1"));
  auto err = (*c)->wait_ref("s1", kWait);
  ASSERT_TRUE(err.ok()) << err.error().to_string();
  EXPECT_EQ(err->type, "ERROR");
  EXPECT_EQ(err->code, "UNAUTHENTICATED");
  EXPECT_EQ(relay_->stats().sends, 0u);
}

TEST_F(RelayTest, QimLoadCountsEveryMessageOfAStepAsDelivered) {
  load::LoadOptions o;
  o.ports = {relay_->port()};
  o.secret = kSecret;
  o.pairs = 10;
  o.config = "relay";
  auto run = load::LoadRun::connect(o, 1000);
  ASSERT_TRUE(run.ok()) << run.error().to_string();
  auto step = (*run)->run_step(200, 2, 10, [](const std::string&) {});
  EXPECT_EQ(step.sent, 400u);
  EXPECT_EQ(step.acked, step.sent);
  EXPECT_EQ(step.delivered, step.sent);
  EXPECT_EQ(step.errors, 0u);
  // Each message reached its receiver and its sender's own connection (the sender's copy is queued just
  // after the receiver's, so it is awaited).
  const auto until = std::chrono::steady_clock::now() + kWait;
  while (relay_->stats().delivers < 2 * step.sent && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(relay_->stats().delivers, 2 * step.sent);
}

}  // namespace
}  // namespace qim::relay
