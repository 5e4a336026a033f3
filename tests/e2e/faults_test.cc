// Faults with real processes on the distributed deployment (issue 9, item 9): each test says what it
// injects and what it checks. ctest label `faults`; runs with QIM_E2E_DEPLOYMENT=distributed (and what
// that needs: QIM_KAFKA_BROKERS, QIM_ROUTING_REDIS, QIM_E2E_BACKEND=redis|scylla with its store variables),
// and skips naming QIM_E2E_DEPLOYMENT otherwise.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "e2e/e2e_env.h"
#include "e2e/fault_support.h"
#include "e2e/history_support.h"
#include "e2e/scenario_helpers.h"

namespace qim::e2e {
namespace {

#define QIM_NEEDS_DISTRIBUTED()                                                                        \
  if (deployment_under_test() != "distributed")                                                        \
  GTEST_SKIP() << "set QIM_E2E_DEPLOYMENT=distributed (with QIM_KAFKA_BROKERS, QIM_ROUTING_REDIS and " \
                  "QIM_E2E_BACKEND=redis|scylla) to run the fault tests"

// Injected: SIGKILL of gateway-1 while its client (bob) is connected and behind. Checked: bob reconnects to
// gateway-2 and resumes from his cursor: every message sent (before, during and after the kill, all through
// gateway-2) shows exactly once, in order, nothing at or below the cursor again; pushes reach him on
// gateway-2; gateway-1 starts again and the deployment stops cleanly.
TEST(Faults, KilledGatewaysClientsResumeOnTheOtherFromTheirCursor) {
  QIM_NEEDS_DISTRIBUTED();
  auto qim = new_deployment("fault-gw");
  ASSERT_TRUE(qim->start().ok()) << qim->log_tail();
  const auto ports = qim->gateway_ports();
  ASSERT_EQ(ports.size(), 2u);
  const auto a = user("fgw", "a"), b = user("fgw", "b");
  auto alice = login_at(ports[1], a);
  auto bob = login_at(ports[0], b);
  ASSERT_TRUE(alice && bob);
  constexpr int kBefore = 10, kDuring = 15;
  for (int i = 0; i < kBefore; ++i) ASSERT_TRUE(alice->send(b, "m" + std::to_string(i), "before").ok());
  auto seen = sync_until(*bob, [](const auto& e) { return e.size() >= kBefore; });
  ASSERT_EQ(seen.size(), static_cast<size_t>(kBefore));
  const uint64_t cursor = seen.back().seq;

  ASSERT_TRUE(qim->kill_process("gateway-1").ok());
  for (int i = kBefore; i < kBefore + kDuring; ++i)
    ASSERT_TRUE(alice->send(b, "m" + std::to_string(i), "while gateway-1 is dead").ok());
  bob = login_at(ports[1], b);  // the client's reconnect: the other gateway
  ASSERT_TRUE(bob);
  auto rest = sync_until(
      *bob, [](const auto& e) { return e.size() >= kDuring; }, cursor);
  ASSERT_EQ(rest.size(), static_cast<size_t>(kDuring)) << "lost or repeated after the cursor";
  for (int i = 0; i < kDuring; ++i) EXPECT_EQ(rest[i].client_msg_id, "m" + std::to_string(kBefore + i));
  EXPECT_GT(rest.front().seq, cursor);
  expect_strictly_increasing(rest);
  // Live again on gateway-2: the next message is pushed to bob there (after, possibly, pushes of the
  // messages sent while he was away, which his cursor already covers).
  auto ack = alice->send(b, "live", "after the reconnect");
  ASSERT_TRUE(ack.ok());
  bool live_pushed = false;
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (!live_pushed && std::chrono::steady_clock::now() < deadline) {
    for (const auto& e : collect_delivered(*bob, 1, 1s))
      live_pushed = live_pushed || e.message_id == ack->message_id;
  }
  EXPECT_TRUE(live_pushed) << "no push of the new message on the surviving gateway";
  auto all = sync_until(*bob, [](const auto& e) { return has_cmid(e, "live"); });
  std::set<std::string> ids;
  for (const auto& e : all) ids.insert(e.client_msg_id);
  EXPECT_EQ(ids.size(), all.size()) << "an entry shows twice";
  EXPECT_EQ(all.size(), static_cast<size_t>(kBefore + kDuring + 1));
  expect_strictly_increasing(all);

  ASSERT_TRUE(qim->start_process("gateway-1").ok()) << qim->log_tail();
  EXPECT_TRUE(login_at(qim->gateway_ports()[0], b)) << "gateway-1 did not come back";
  EXPECT_EQ(qim->stop(), 0) << qim->log_tail();
}

// Injected: SIGKILL of mailbox-1 in the middle of a load spread over every shard (nodes on leases,
// QIM_SHARD_LEASE_TTL_MS=6000). Checked: mailbox-2 takes mailbox-1's shards (all 16 listed on its
// /admin/pipeline); every acknowledged message shows exactly once in its recipient's mailbox, in order,
// at or below the frontier (the frontier stays contiguous: a SYNC from 0 returns all of them); the
// recorded history passes the checker (src/checker/checker.h) with every mailbox read at the end.
TEST(Faults, KilledNodesShardsAreTakenOverAndNothingIsLostOrShownTwice) {
  QIM_NEEDS_DISTRIBUTED();
  auto qim = new_deployment("fault-node", Ownership::kLeases);
  const Env leases = {{"QIM_SHARD_LEASE_TTL_MS", "6000"}};
  ASSERT_TRUE(qim->start(leases).ok()) << qim->log_tail();
  // Both nodes hold shards once the leases settle.
  const auto settle = std::chrono::steady_clock::now() + 60s;
  while ((owned_shards(*qim, "mailbox-1") <= 0 || owned_shards(*qim, "mailbox-2") <= 0 ||
          owned_shards(*qim, "mailbox-1") + owned_shards(*qim, "mailbox-2") < 16) &&
         std::chrono::steady_clock::now() < settle)
    std::this_thread::sleep_for(100ms);
  ASSERT_GT(owned_shards(*qim, "mailbox-1"), 0) << qim->log_tail();
  ASSERT_GT(owned_shards(*qim, "mailbox-2"), 0) << qim->log_tail();

  // Recipients on every shard, senders on both gateways.
  const auto by_shard = one_recipient_per_shard("fnode");
  ASSERT_EQ(by_shard.size(), 16u);
  checker::HistoryRecorder h(history_path("faults-killed-node"));
  const std::string s1_name = user("fnode", "s1"), s2_name = user("fnode", "s2");
  auto s1 = login_at(qim->gateway_ports()[0], s1_name);
  auto s2 = login_at(qim->gateway_ports()[1], s2_name);
  ASSERT_TRUE(s1 && s2);
  constexpr int kRounds = 12;  // 12 rounds x 16 recipients, the node killed after round 4
  std::map<std::string, std::vector<std::string>> sent;  // recipient -> client_msg_ids acknowledged
  for (int round = 0; round < kRounds; ++round) {
    if (round == 4) {
      ASSERT_TRUE(qim->kill_process("mailbox-1").ok());
    }
    for (const auto& [shard, r] : by_shard) {
      auto& sender = (shard % 2 == 0) ? s1 : s2;
      const std::string& sender_name = (shard % 2 == 0) ? s1_name : s2_name;
      const std::string cmid = "n" + std::to_string(round) + "-" + std::to_string(shard);
      auto ack = recorded_send(h, *sender, sender_name + "/d1", sender_name, r, cmid, "load");
      ASSERT_TRUE(ack.ok()) << ack.error().to_string();
      sent[r].push_back(cmid);
    }
  }
  const auto takeover = std::chrono::steady_clock::now() + 60s;
  while (owned_shards(*qim, "mailbox-2") < 16 && std::chrono::steady_clock::now() < takeover)
    std::this_thread::sleep_for(100ms);
  ASSERT_EQ(owned_shards(*qim, "mailbox-2"), 16) << "mailbox-2 did not take mailbox-1's shards\n"
                                                 << qim->log_tail();
  for (const auto& [r, cmids] : sent) {
    auto c = login(*qim, r);
    ASSERT_TRUE(c);
    auto entries = sync_until(*c, [&](const auto& e) { return e.size() >= cmids.size(); });
    ASSERT_EQ(entries.size(), cmids.size()) << r << ": lost or shown twice";
    for (size_t i = 0; i < cmids.size(); ++i)
      EXPECT_EQ(entries[i].client_msg_id, cmids[i]) << r << " at " << i;
    expect_strictly_increasing(entries);
    auto page = c->sync(0, 500);
    ASSERT_TRUE(page.ok());
    EXPECT_GE(page->frontier, entries.back().seq) << r << ": an entry above the frontier was shown";
    EXPECT_TRUE(record_final_mailbox(h, *c, r));
  }
  EXPECT_TRUE(record_final_mailbox(h, *s1, s1_name));
  EXPECT_TRUE(record_final_mailbox(h, *s2, s2_name));
  expect_history_ok(h);
  EXPECT_EQ(qim->stop(), 0) << qim->log_tail();
}

// Injected: a SEND acknowledged by gateway-1 whose acknowledgement the client never saw (its connection
// dropped), retried with the same client_msg_id through gateway-2, and once more with other content.
// Checked: the retry gets the same message_id (the gateways share the idempotency table in the routing
// Redis), the other content is refused as a key reuse, and the recipient's mailbox holds the message once.
TEST(Faults, ASendRetriedThroughTheOtherGatewayGetsTheSameMessageId) {
  QIM_NEEDS_DISTRIBUTED();
  auto qim = new_deployment("fault-dedup");
  ASSERT_TRUE(qim->start().ok()) << qim->log_tail();
  const auto ports = qim->gateway_ports();
  ASSERT_EQ(ports.size(), 2u);
  const auto a = user("fdd", "a"), b = user("fdd", "b");
  auto first = login_at(ports[0], a);
  ASSERT_TRUE(first);
  auto ack = first->send(b, "retried-1", "once");
  ASSERT_TRUE(ack.ok()) << ack.error().to_string();
  first.reset();  // the connection is gone: the client does not know it was acknowledged

  auto retry = login_at(ports[1], a);
  ASSERT_TRUE(retry);
  auto again = retry->send(b, "retried-1", "once");
  ASSERT_TRUE(again.ok()) << again.error().to_string();
  EXPECT_EQ(again->message_id, ack->message_id) << "the other gateway appended the retry anew";
  auto other = retry->send(b, "retried-1", "other content");
  EXPECT_FALSE(other.ok()) << "a key reused with other content was accepted through the other gateway";

  auto bob = login_at(qim->port_for(b), b);
  ASSERT_TRUE(bob);
  auto seen = sync_until(*bob, [](const auto& e) { return has_cmid(e, "retried-1"); });
  size_t copies = 0;
  for (const auto& e : seen) copies += e.client_msg_id == "retried-1";
  EXPECT_EQ(copies, 1u) << "the retried message shows more than once";
  EXPECT_EQ(qim->stop(), 0) << qim->log_tail();
}

}  // namespace
}  // namespace qim::e2e
