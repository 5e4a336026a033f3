// TYPING and PRESENCE_SUBSCRIBE on one gateway (its own SignalBus and presence hub), over real WebSockets:
// who gets a typing signal and who does not, the refusals and their codes, presence of a user's devices.
#include <gtest/gtest.h>

#include "gateway/ephemeral_requests.h"
#include "gateway/tests/gateway_harness.h"
#include "groups/embedded/rocks_group_store.h"
#include "log/testing/temp_dir.h"
#include "presence/memory_presence_exchange.h"

namespace qim {
namespace {

using namespace std::chrono_literals;

constexpr const char* kSecret = "ephemeral-secret";

UserId u(std::string_view name) {
  return *UserId::parse(name);
}

bool has(const client::ServerFrame& f, std::string_view text) {
  return f.raw.find(text) != std::string::npos;
}

// The next frame of `type` that contains `text`, or an error.
Result<client::ServerFrame> next(client::Client& c, std::string_view type, std::string_view text,
                                 std::chrono::milliseconds wait = 5s) {
  return c.wait_for([&](const client::ServerFrame& f) { return f.type == type && has(f, text); }, wait);
}

class EphemeralTest : public testing::GatewayHarness {
 protected:
  EphemeralTest() : GatewayHarness(kSecret) {}
  void SetUp() override {
    groups_ = RocksGroupStore::open(dir_.sub("groups")).value();
    start();
  }
  void configure(GatewayOptions& o, GatewayDeps& d) override {
    o.max_frames_per_second = 10'000;
    d.groups = groups_.get();
  }
  ConversationId create_group(const std::string& name, const std::string& owner,
                              const std::vector<std::string>& members) {
    GroupState state(GroupId::parse(name).value());
    std::vector<UserId> ids;
    for (const auto& m : members) ids.push_back(u(m));
    GroupChange change =
        state.apply(GroupOp{GroupOpKind::kCreate, ids, name, GroupRole::kMember}, u(owner), 1, 10'000);
    EXPECT_TRUE(change.outcome.applied) << change.outcome.reason;
    EXPECT_TRUE(groups_->apply(change).ok());
    return Conversation::group(state.group()).value().id();
  }

  testing::TempDir dir_;
  std::unique_ptr<RocksGroupStore> groups_;
};

TEST_F(EphemeralTest, TypingReachesThePeersConnectionsButNotTheSendersOwn) {
  auto alice = login("alice");
  auto alice2 = login("alice", "d2");
  auto bob = login("bob");
  auto bob2 = login("bob", "d2");
  auto carol = login("carol");
  alice->send_text(R"({"type":"TYPING","conversation":"d:alice:bob"})");
  for (auto* c : {bob.get(), bob2.get()}) {
    auto f = next(*c, "TYPING", "alice");
    ASSERT_TRUE(f.ok()) << f.error().to_string();
    EXPECT_EQ(
        f->raw,
        R"({"type":"TYPING","conversation":"d:alice:bob","user":"alice","state":"start","expires_in_ms":6000})");
  }
  alice->send_text(R"({"type":"TYPING","conversation":"d:alice:bob","state":"stop"})");
  auto stop = next(*bob, "TYPING", "\"stop\"");
  ASSERT_TRUE(stop.ok());
  EXPECT_TRUE(has(*stop, "\"expires_in_ms\":0"));
  // Neither the sender's devices nor a third user hear it.
  EXPECT_FALSE(next(*alice, "TYPING", "alice", 300ms).ok());
  EXPECT_FALSE(next(*alice2, "TYPING", "alice", 100ms).ok());
  EXPECT_FALSE(next(*carol, "TYPING", "alice", 100ms).ok());
}

TEST_F(EphemeralTest, ANonMemberIsRefusedAndNobodyHearsIt) {
  auto bob = login("bob");
  auto carol = login("carol");
  carol->send_text(R"({"type":"TYPING","ref":"t1","conversation":"d:alice:bob"})");
  auto e = carol->wait_ref("t1", 5s);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->code, "FORBIDDEN");
  const auto g = create_group("team", "alice", {"bob"});
  carol->send_text(R"({"type":"TYPING","ref":"t2","conversation":")" + g.str() + R"("})");
  auto e2 = carol->wait_ref("t2", 5s);
  ASSERT_TRUE(e2.ok());
  EXPECT_EQ(e2->code, "NOT_A_MEMBER");
  EXPECT_FALSE(next(*bob, "TYPING", "carol", 300ms).ok());
}

TEST_F(EphemeralTest, GroupTypingReachesTheOtherMembers) {
  const auto g = create_group("crew", "alice", {"bob", "carol"});
  auto alice = login("alice");
  auto bob = login("bob");
  auto carol = login("carol");
  auto dave = login("dave");
  alice->send_text(R"({"type":"TYPING","conversation":")" + g.str() + R"("})");
  EXPECT_TRUE(next(*bob, "TYPING", g.str()).ok());
  EXPECT_TRUE(next(*carol, "TYPING", g.str()).ok());
  EXPECT_FALSE(next(*alice, "TYPING", g.str(), 300ms).ok());
  EXPECT_FALSE(next(*dave, "TYPING", g.str(), 100ms).ok());
}

TEST_F(EphemeralTest, TypingOverItsRateIsRateLimitedPerConversation) {
  auto alice = login("alice");
  auto bob = login("bob");
  for (int i = 0; i < 3; ++i) alice->send_text(R"({"type":"TYPING","conversation":"d:alice:bob"})");
  alice->send_text(R"({"type":"TYPING","ref":"over","conversation":"d:alice:bob"})");
  auto e = alice->wait_ref("over", 5s);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->code, "RATE_LIMITED");
  // Another conversation has its own bucket.
  alice->send_text(R"({"type":"TYPING","ref":"other","conversation":"d:alice:carol"})");
  EXPECT_FALSE(alice->wait_ref("other", 300ms).ok());
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(next(*bob, "TYPING", "alice").ok()) << i;
  EXPECT_FALSE(next(*bob, "TYPING", "alice", 300ms).ok());
}

TEST_F(EphemeralTest, MalformedFramesAreInvalidArguments) {
  auto alice = login("alice");
  for (std::string frame :
       {R"({"type":"TYPING","ref":"a"})", R"({"type":"TYPING","ref":"a","conversation":"x"})",
        R"({"type":"TYPING","ref":"a","conversation":"d:alice:bob","state":"maybe"})",
        R"({"type":"PRESENCE_SUBSCRIBE","ref":"a","users":"bob"})",
        R"({"type":"PRESENCE_SUBSCRIBE","ref":"a","users":["bob","bob"]})"}) {
    alice->send_text(frame);
    auto e = alice->wait_ref("a", 5s);
    ASSERT_TRUE(e.ok()) << frame;
    EXPECT_EQ(e->code, "INVALID_ARGUMENT") << frame;
  }
  std::string many = R"({"type":"PRESENCE_SUBSCRIBE","ref":"a","users":[)";
  for (size_t i = 0; i <= kMaxPresenceSubscriptions; ++i)
    many += (i ? ",\"u" : "\"u") + std::to_string(i) + "\"";
  alice->send_text(many + "]}");
  auto e = alice->wait_ref("a", 5s);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->code, "INVALID_ARGUMENT");
}

TEST_F(EphemeralTest, PresenceOfAUserWithThreeDevices) {
  auto dave = login("dave");
  dave->send_text(R"({"type":"PRESENCE_SUBSCRIBE","ref":"p1","users":["carol"]})");
  auto state = dave->wait_ref("p1", 5s);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(
      state->raw,
      R"({"type":"PRESENCE_STATE","ref":"p1","users":[{"user":"carol","status":"offline","last_seen":null}]})");
  auto c1 = login("carol", "d1");
  auto c2 = login("carol", "d2");
  auto c3 = login("carol", "d3");
  EXPECT_TRUE(next(*dave, "PRESENCE", "online").ok());
  c1->close();
  c2->close();
  // Still online (one device): no offline within the 5 s grace either way, so ask.
  dave->send_text(R"({"type":"PRESENCE_SUBSCRIBE","ref":"p2","users":["carol"]})");
  auto again = dave->wait_ref("p2", 5s);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(has(*again, R"("status":"online")"));
  EXPECT_FALSE(next(*dave, "PRESENCE", "offline", 300ms).ok());
}

// With a presence hub whose directory knows the direct peers (the inbox's role in a deployment): they are
// watched from AUTH, their state pushed as a PRESENCE_STATE without ref, and "contacts" shows to them only.
class PeersTest : public testing::GatewayHarness {
 protected:
  PeersTest() : GatewayHarness(kSecret) {}
  void SetUp() override {
    directory_.add_peers(u("alice"), u("bob"));
    PresenceOptions o;
    o.offline_grace = std::chrono::milliseconds(50);
    hub_ = std::make_unique<PresenceHub>(exchange_, &directory_, clock_, o);
    start();
  }
  void TearDown() override {
    GatewayHarness::TearDown();
    hub_.reset();
  }
  void configure(GatewayOptions&, GatewayDeps& d) override { d.presence = hub_.get(); }

  MemoryPresenceDirectory directory_;
  MemoryPresenceExchange exchange_;
  std::unique_ptr<PresenceHub> hub_;
};

TEST_F(PeersTest, DirectPeersAreWatchedFromAuthAndContactsSeeThem) {
  directory_.set_privacy(u("alice"), PresencePrivacy::kContacts);
  auto alice = login("alice");
  auto bob = login("bob");
  auto peers = bob->wait_for([](const client::ServerFrame& f) { return f.type == "PRESENCE_STATE"; }, 5s);
  ASSERT_TRUE(peers.ok()) << peers.error().to_string();
  // Alice's going online travels through the exchange, as between two gateways: bob's snapshot at his AUTH
  // may come before it (a loaded machine), and then the change follows it as a PRESENCE push.
  if (peers->raw !=
      R"({"type":"PRESENCE_STATE","users":[{"user":"alice","status":"online","last_seen":null}]})") {
    EXPECT_EQ(peers->raw,
              R"({"type":"PRESENCE_STATE","users":[{"user":"alice","status":"offline","last_seen":null}]})");
    EXPECT_TRUE(next(*bob, "PRESENCE", R"("status":"online")").ok()) << "bob never saw alice online";
  }
  // carol is no contact of alice: subscribed explicitly, she sees her offline and hears nothing.
  auto carol = login("carol");
  carol->send_text(R"({"type":"PRESENCE_SUBSCRIBE","ref":"p","users":["alice"]})");
  auto state = carol->wait_ref("p", 5s);
  ASSERT_TRUE(state.ok());
  EXPECT_TRUE(has(*state, R"("status":"offline","last_seen":null)")) << state->raw;
  alice->close();
  auto offline = next(*bob, "PRESENCE", R"("status":"offline")");
  ASSERT_TRUE(offline.ok()) << offline.error().to_string();
  EXPECT_FALSE(has(*offline, R"("last_seen":null)"));
  EXPECT_FALSE(next(*carol, "PRESENCE", "alice", 300ms).ok());
}

}  // namespace
}  // namespace qim
