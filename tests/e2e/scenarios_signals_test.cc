// Typing and presence against a real deployment (issue 38, items 5, 6 and 8): across the two gateways of
// the distributed deployment (through the routing Redis), in one process on `qim up`.
#include <gtest/gtest.h>

#include <string>

#include "e2e/e2e_env.h"
#include "e2e/scenario_helpers.h"

namespace qim::e2e {
namespace {

std::string typing(const std::string& conversation, const std::string& extra = "") {
  return R"({"type":"TYPING","conversation":")" + conversation + "\"" + extra + "}";
}

// T01. Typing reaches the peer's connections on the other gateway, never the sender's own; a non-member's
// TYPING is FORBIDDEN and reaches nobody.
TEST(E2E, T01_TypingCrossesGatewaysMembersOnly) {
  auto& qim = shared_qim();
  const auto a = user("t01", "alice"), b = user("t01", "bob"), c = user("t01", "carol");
  auto alice = login_at(first_gateway(qim), a);
  auto bob = login_at(last_gateway(qim), b);
  auto bob2 = login_at(first_gateway(qim), b, "d2");
  auto carol = login_at(last_gateway(qim), c);
  ASSERT_TRUE(alice && bob && bob2 && carol);
  const std::string ab = conv(a, b);
  alice->send_text(typing(ab));
  for (auto* to : {bob.get(), bob2.get()}) {
    auto f = next(*to, "TYPING", ab);
    ASSERT_TRUE(f.ok()) << f.error().to_string();
    EXPECT_NE(f->raw.find(R"("user":")" + a + R"(","state":"start","expires_in_ms":6000)"), std::string::npos)
        << f->raw;
  }
  carol->send_text(typing(ab, R"(,"ref":"t")"));
  auto refused = carol->wait_ref("t", kWait);
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->code, "FORBIDDEN");
  alice->send_text(typing(ab, R"(,"state":"stop")"));
  EXPECT_TRUE(next(*bob, "TYPING", "\"stop\"").ok());
  // Nothing reached the sender, nor the non-member (of alice's typing or of its own).
  EXPECT_FALSE(next(*alice, "TYPING", ab, kQuiet).ok());
  EXPECT_FALSE(next(*carol, "TYPING", ab, 100ms).ok());
  EXPECT_FALSE(next(*bob, "TYPING", c, 100ms).ok());
}

// T02. TYPING over its rate (per connection and conversation) is RATE_LIMITED and not sent on.
TEST(E2E, T02_TypingRateLimited) {
  auto& qim = shared_qim();
  const auto a = user("t02", "alice"), b = user("t02", "bob");
  auto alice = login_at(first_gateway(qim), a);
  auto bob = login_at(last_gateway(qim), b);
  ASSERT_TRUE(alice && bob);
  const std::string ab = conv(a, b);
  for (int i = 0; i < 3; ++i) alice->send_text(typing(ab));
  alice->send_text(typing(ab, R"(,"ref":"over")"));
  auto e = alice->wait_ref("over", kWait);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->code, "RATE_LIMITED");
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(next(*bob, "TYPING", ab).ok()) << i;
  EXPECT_FALSE(next(*bob, "TYPING", ab, kQuiet).ok());
}

// T03. A user with three devices over both gateways is online while any is connected: one PRESENCE online,
// no offline while one device stays (past the debounce), then one offline with a last seen.
TEST(E2E, T03_PresenceOfThreeDevicesAcrossGateways) {
  auto& qim = shared_qim();
  const auto d = user("t03", "dave"), c = user("t03", "carol");
  auto dave = login_at(first_gateway(qim), d);
  ASSERT_TRUE(dave);
  dave->send_text(R"({"type":"PRESENCE_SUBSCRIBE","ref":"p1","users":[")" + c + R"("]})");
  auto state = dave->wait_ref("p1", kWait);
  ASSERT_TRUE(state.ok());
  EXPECT_NE(state->raw.find(R"("status":"offline","last_seen":null)"), std::string::npos) << state->raw;
  auto c1 = login_at(first_gateway(qim), c, "d1");
  auto c2 = login_at(last_gateway(qim), c, "d2");
  auto c3 = login_at(last_gateway(qim), c, "d3");
  ASSERT_TRUE(c1 && c2 && c3);
  auto online = next(*dave, "PRESENCE", R"("status":"online")");
  ASSERT_TRUE(online.ok()) << online.error().to_string();
  EXPECT_FALSE(next(*dave, "PRESENCE", c, kQuiet).ok()) << "a second change for one user going online";
  c1->close();
  c2->close();
  // The deployment's grace is QIM_PRESENCE_GRACE_MS=1000 (e2e_env.cc): past it, still online.
  EXPECT_FALSE(next(*dave, "PRESENCE", R"("status":"offline")", 2500ms).ok());
  dave->send_text(R"({"type":"PRESENCE_SUBSCRIBE","ref":"p2","users":[")" + c + R"("]})");
  auto still = dave->wait_ref("p2", kWait);
  ASSERT_TRUE(still.ok());
  EXPECT_NE(still->raw.find(R"("status":"online")"), std::string::npos) << still->raw;
  c3->close();
  auto offline = next(*dave, "PRESENCE", R"("status":"offline")");
  ASSERT_TRUE(offline.ok()) << offline.error().to_string();
  EXPECT_EQ(offline->raw.find(R"("last_seen":null)"), std::string::npos) << offline->raw;
}

// T04. A reconnect within the debounce is no change: no offline, no second online.
TEST(E2E, T04_PresenceReconnectWithinTheGraceIsNoChange) {
  auto& qim = shared_qim();
  const auto d = user("t04", "dave"), c = user("t04", "carol");
  auto dave = login_at(last_gateway(qim), d);
  ASSERT_TRUE(dave);
  auto c1 = login_at(first_gateway(qim), c);
  ASSERT_TRUE(c1);
  dave->send_text(R"({"type":"PRESENCE_SUBSCRIBE","ref":"p","users":[")" + c + R"("]})");
  auto state = dave->wait_ref("p", kWait);
  ASSERT_TRUE(state.ok());
  // Carol's gateway announces her online from its hub's thread, just after her AUTH_OK: the state may
  // come before it, and her online then comes as a push. Either way she is online before she leaves.
  if (state->raw.find(R"("status":"online")") == std::string::npos) {
    ASSERT_TRUE(next(*dave, "PRESENCE", R"("status":"online")").ok()) << state->raw;
  }
  c1->close();
  auto c2 = login_at(last_gateway(qim), c);  // back at once, on the other gateway
  ASSERT_TRUE(c2);
  EXPECT_FALSE(next(*dave, "PRESENCE", c, 2500ms).ok());
}

// A direct conversation between `from` and `to` whose message `to` has been delivered: from then on the
// inbox holds their rows, which make them contacts (presence privacy) and direct peers (AUTH).
void make_contacts(Client& from, Client& to, const std::string& to_user, const std::string& cmid) {
  ASSERT_TRUE(from.send(to_user, cmid, "hi").ok());
  auto delivered = to.wait_for(
      [&](const ServerFrame& f) { return f.type == "DELIVER" && has_cmid(f.entries, cmid); }, kWait);
  ASSERT_TRUE(delivered.ok()) << delivered.error().to_string();
}

// T05. Presence privacy: `contacts` hides carol from a stranger and not from her contact; `nobody` hides
// her from both (her contact is pushed an offline as he loses sight); `everyone` again pushes her online to
// the stranger who watches her. Hidden means offline with no last_seen.
TEST(E2E, T05_PresencePrivacyContactsAndNobody) {
  auto& qim = shared_qim();
  const auto c = user("t05", "carol"), d = user("t05", "dave"), e = user("t05", "erin");
  auto carol = login_at(first_gateway(qim), c);
  auto dave = login_at(last_gateway(qim), d);
  auto erin = login_at(last_gateway(qim), e);
  ASSERT_TRUE(carol && dave && erin);
  make_contacts(*carol, *dave, d, "t05-1");
  auto set = carol->settings({.presence = "contacts"});
  ASSERT_TRUE(set.ok()) << set.error().to_string();

  const std::string subscribe = R"({"type":"PRESENCE_SUBSCRIBE","ref":"p","users":[")" + c + R"("]})";
  const std::string hidden = R"("user":")" + c + R"(","status":"offline","last_seen":null)";
  erin->send_text(subscribe);
  auto to_erin = erin->wait_ref("p", kWait);
  ASSERT_TRUE(to_erin.ok());
  EXPECT_NE(to_erin->raw.find(hidden), std::string::npos) << to_erin->raw;
  dave->send_text(subscribe);
  auto to_dave = dave->wait_ref("p", kWait);
  ASSERT_TRUE(to_dave.ok());
  if (to_dave->raw.find(R"("status":"online")") == std::string::npos) {  // her online may come as a push
    ASSERT_TRUE(next(*dave, "PRESENCE", R"("status":"online")").ok()) << to_dave->raw;
  }

  set = carol->settings({.presence = "nobody"});
  ASSERT_TRUE(set.ok()) << set.error().to_string();
  auto lost = next(*dave, "PRESENCE", R"("status":"offline")");
  ASSERT_TRUE(lost.ok()) << "dave is not told he lost sight of carol";
  EXPECT_NE(lost->raw.find(R"("last_seen":null)"), std::string::npos) << lost->raw;
  dave->send_text(R"({"type":"PRESENCE_SUBSCRIBE","ref":"p2","users":[")" + c + R"("]})");
  to_dave = dave->wait_ref("p2", kWait);
  ASSERT_TRUE(to_dave.ok());
  EXPECT_NE(to_dave->raw.find(hidden), std::string::npos) << to_dave->raw;
  // Erin never saw carol: a privacy change may be pushed to her (the hub does not know the old setting),
  // but still hidden.
  auto to_erin2 = next(*erin, "PRESENCE", c, 200ms);
  EXPECT_TRUE(!to_erin2.ok() || to_erin2->raw.find(hidden) != std::string::npos) << to_erin2->raw;

  set = carol->settings({.presence = "everyone"});
  ASSERT_TRUE(set.ok()) << set.error().to_string();
  EXPECT_TRUE(next(*erin, "PRESENCE", R"("status":"online")").ok()) << "erin gains sight of carol";
  EXPECT_TRUE(next(*dave, "PRESENCE", R"("status":"online")").ok()) << "dave gains sight of carol";
}

// T06. After AUTH a user is sent their direct peers' state unasked (a PRESENCE_STATE without ref), and
// pushed their changes; a user they share no conversation with is not in it.
TEST(E2E, T06_DirectPeersArePresentAfterAuthWithoutASubscribe) {
  auto& qim = shared_qim();
  const auto c = user("t06", "carol"), d = user("t06", "dave"), e = user("t06", "erin");
  auto carol = login_at(first_gateway(qim), c);
  auto dave = login_at(last_gateway(qim), d);
  auto erin = login_at(first_gateway(qim), e);
  ASSERT_TRUE(carol && dave && erin);
  make_contacts(*carol, *dave, d, "t06-1");
  dave->close();

  auto dave2 = login_at(last_gateway(qim), d, "d2");
  ASSERT_TRUE(dave2);
  auto state = dave2->wait_for(
      [](const ServerFrame& f) { return f.type == "PRESENCE_STATE" && f.ref.empty(); }, kWait);
  ASSERT_TRUE(state.ok()) << "no PRESENCE_STATE of the direct peers after AUTH";
  EXPECT_NE(state->raw.find(R"("user":")" + c + R"(","status":"online")"), std::string::npos) << state->raw;
  EXPECT_EQ(state->raw.find(e), std::string::npos) << state->raw;
  carol->close();
  auto off = next(*dave2, "PRESENCE", R"("status":"offline")");
  ASSERT_TRUE(off.ok()) << "carol's going offline is not pushed to her direct peer";
  EXPECT_NE(off->raw.find(c), std::string::npos) << off->raw;
}

}  // namespace
}  // namespace qim::e2e
