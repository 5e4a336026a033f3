// The sixteen end-to-end scenarios of SYSTEM.md section 5, over real WebSockets against a real `qim up`.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <thread>

#include "auth/token.h"
#include "core/sharding.h"
#include "e2e/e2e_env.h"
#include "mailbox/contract_store.h"
#include "mailbox/store_options.h"
#include "outbox/outbox_record.h"

#if __has_include("mailbox/embedded/embedded_backend.h")
#include "mailbox/embedded/embedded_backend.h"
#define QIM_E2E_HAVE_EMBEDDED 1
#endif

namespace qim::e2e {
namespace {

std::string conv(const std::string& a, const std::string& b) {
  return direct_conversation(*UserId::parse(a), *UserId::parse(b))->str();
}

bool has_cmid(const std::vector<Entry>& entries, const std::string& cmid) {
  return std::any_of(entries.begin(), entries.end(), [&](const Entry& e) { return e.client_msg_id == cmid; });
}

void expect_strictly_increasing(const std::vector<Entry>& entries) {
  for (size_t i = 1; i < entries.size(); ++i) {
    EXPECT_LT(entries[i - 1].seq, entries[i].seq) << "at " << i;
  }
}

// 1. auth: a valid token is accepted; a bad or expired one is refused with a clear error.
TEST(E2E, S01_Auth) {
  auto& qim = shared_qim();
  const auto alice = user("s01", "alice");
  auto ok = connect_to(qim)->auth(token_for(alice, "phone"));
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  EXPECT_EQ(ok->user, alice);
  EXPECT_EQ(ok->device, "phone");

  auto garbage = connect_to(qim);
  auto r1 = garbage->auth("not-a-token");
  ASSERT_FALSE(r1.ok());
  EXPECT_EQ(r1.error().message().rfind("UNAUTHENTICATED: token malformed", 0), 0u) << r1.error().message();

  SystemClock wall;
  auto forged = mint_token("some-other-secret", *UserId::parse(alice), *DeviceId::parse("d"), 60'000, wall);
  auto r2 = connect_to(qim)->auth(*forged);
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.error().message().find("signature does not match"), std::string::npos);

  ManualClock two_hours_ago(wall.now_ms() - 2 * 3'600'000);
  auto expired = mint_token(kSecret, *UserId::parse(alice), *DeviceId::parse("d"), 3'600'000, two_hours_ago);
  auto r3 = connect_to(qim)->auth(*expired);
  ASSERT_FALSE(r3.ok());
  EXPECT_NE(r3.error().message().find("token expired"), std::string::npos) << r3.error().message();
  // A refused connection is closed: nothing else can be done on it.
  EXPECT_EQ(garbage->wait_type("never", kWait).code(), Errc::kTransport);
}

// 2. SEND_ACK carries the server message id and time, and is sent only once the Outbox append is durable:
//    a crash right after the ack loses nothing.
TEST(E2E, S02_SendAckIsDurable) {
  auto& qim = shared_qim();
  const auto a = user("s02", "a"), b = user("s02", "b");
  auto ack = login(qim, a)->send(b, "m1", "durable?");
  ASSERT_TRUE(ack.ok()) << ack.error().to_string();
  EXPECT_EQ(ack->type, "SEND_ACK");
  EXPECT_EQ(ack->client_msg_id, "m1");
  EXPECT_GT(ack->server_time, 0);
  EXPECT_EQ(ack->conversation, conv(a, b));
  EXPECT_FALSE(ack->duplicate);

  qim.kill();  // SIGKILL right after the ack: no drain, no flush
  auto st = qim.start();
  ASSERT_TRUE(st.ok()) << st.error().to_string();
  auto bob = login(qim, b);
  auto entries = sync_until(*bob, [](const auto& e) { return !e.empty(); });
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].message_id, ack->message_id);
  EXPECT_EQ(entries[0].server_time, ack->server_time);
  EXPECT_EQ(entries[0].body, "durable?");
  EXPECT_EQ(entries[0].sender, a);
}

// 3. idempotent send: the same client message id twice gives one message id and one delivery.
TEST(E2E, S03_IdempotentSend) {
  auto& qim = shared_qim();
  const auto a = user("s03", "a"), b = user("s03", "b");
  auto alice = login(qim, a);
  auto first = alice->send(b, "same-id", "hello once");
  auto second = alice->send(b, "same-id", "hello once");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->message_id, second->message_id);
  EXPECT_TRUE(second->duplicate);
  // A retry from a fresh connection (as after a network failure) too.
  auto third = login(qim, a, "d1")->send(b, "same-id", "hello once");
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->message_id, first->message_id);
  ASSERT_TRUE(alice->send(b, "marker", "after").ok());

  auto bob = login(qim, b);
  auto entries = sync_until(*bob, [](const auto& e) { return has_cmid(e, "marker"); });
  ASSERT_TRUE(has_cmid(entries, "marker"));
  EXPECT_EQ(std::count_if(entries.begin(), entries.end(),
                          [](const Entry& e) { return e.client_msg_id == "same-id"; }),
            1);
}

// 4. online delivery: a connected recipient gets the message pushed, with its mailbox_seq.
TEST(E2E, S04_OnlineDelivery) {
  auto& qim = shared_qim();
  const auto a = user("s04", "a"), b = user("s04", "b");
  auto bob = login(qim, b);
  auto ack = login(qim, a)->send(b, "m1", "are you there?");
  ASSERT_TRUE(ack.ok());
  auto got = collect_delivered(*bob, 1, kWait);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].message_id, ack->message_id);
  EXPECT_GT(got[0].seq, 0u);
  EXPECT_EQ(got[0].body, "are you there?");
  EXPECT_EQ(got[0].sender, a);
  EXPECT_EQ(got[0].conversation, conv(a, b));
  // The push and the mailbox agree on the sequence.
  auto synced = sync_all(*bob);
  ASSERT_TRUE(synced && synced->size() == 1u);
  EXPECT_EQ((*synced)[0].seq, got[0].seq);
}

// 5. offline delivery: a recipient who connects later gets it with SYNC.
TEST(E2E, S05_OfflineDelivery) {
  auto& qim = shared_qim();
  const auto a = user("s05", "a"), b = user("s05", "b");
  auto ack = login(qim, a)->send(b, "m1", "while you were out");
  ASSERT_TRUE(ack.ok());
  auto bob = login(qim, b);
  auto entries = sync_until(*bob, [](const auto& e) { return !e.empty(); });
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].message_id, ack->message_id);
  EXPECT_EQ(entries[0].body, "while you were out");
}

// 6. order: 100 messages A->B arrive in send order with strictly increasing sequences; a device running
// the client loop of docs/protocol.md shows each exactly once, in order.
TEST(E2E, S06_Order) {
  auto& qim = shared_qim();
  const auto a = user("s06", "a"), b = user("s06", "b");
  auto bob = login(qim, b);
  auto bob_loop = login(qim, b, "loop");
  ASSERT_TRUE(bob_loop);
  client::MailboxFollower follower(*bob_loop, {});
  follower.start();
  auto alice = login(qim, a);
  for (int i = 0; i < 100; ++i)
    alice->send_text(client::send_frame(b, "m" + std::to_string(i), std::to_string(i)));
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(alice->wait_type("SEND_ACK", kWait).ok()) << i;
  auto pushed = collect_delivered(*bob, 100, kWait);
  ASSERT_EQ(pushed.size(), 100u);
  auto synced = sync_all(*bob);
  ASSERT_TRUE(synced);
  ASSERT_EQ(synced->size(), 100u);
  auto shown = follow(follower, 100, kWait);
  ASSERT_EQ(shown.size(), 100u);
  EXPECT_TRUE(follow(follower, 1, kQuiet).empty()) << "the loop showed an entry twice";
  for (const auto* list : {&pushed, &*synced, &shown}) {
    for (int i = 0; i < 100; ++i) EXPECT_EQ((*list)[i].body, std::to_string(i));
    expect_strictly_increasing(*list);
  }
}

// 7. multi-device: both of B's devices get it; A's other device gets A's own message.
TEST(E2E, S07_MultiDevice) {
  auto& qim = shared_qim();
  const auto a = user("s07", "a"), b = user("s07", "b");
  auto b_phone = login(qim, b, "phone");
  auto b_laptop = login(qim, b, "laptop");
  auto a_laptop = login(qim, a, "laptop");
  auto a_phone = login(qim, a, "phone");
  auto ack = a_phone->send(b, "m1", "to every device");
  ASSERT_TRUE(ack.ok());
  for (auto* c : {b_phone.get(), b_laptop.get(), a_laptop.get()}) {
    auto got = collect_delivered(*c, 1, kWait);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].message_id, ack->message_id);
    EXPECT_EQ(got[0].sender, a);
    EXPECT_EQ(got[0].sender_device, "phone");
  }
}

// 8. cursor resume: reconnecting with the last cursor yields exactly what came after it.
TEST(E2E, S08_CursorResume) {
  auto& qim = shared_qim();
  const auto a = user("s08", "a"), b = user("s08", "b");
  auto alice = login(qim, a);
  uint64_t cursor = 0;
  {
    auto bob = login(qim, b);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(alice->send(b, "old" + std::to_string(i), "old").ok());
    auto got = collect_delivered(*bob, 3, kWait);
    ASSERT_EQ(got.size(), 3u);
    cursor = got.back().seq;
  }
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(alice->send(b, "new" + std::to_string(i), "new" + std::to_string(i)).ok());
  auto bob = login(qim, b);
  auto after = sync_until(
      *bob, [](const auto& e) { return e.size() >= 3; }, cursor);
  ASSERT_EQ(after.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(after[i].client_msg_id, "new" + std::to_string(i));
    EXPECT_GT(after[i].seq, cursor);
  }
}

// 9. history: the conversation's history pages back in order.
TEST(E2E, S09_History) {
  auto& qim = shared_qim();
  const auto a = user("s09", "a"), b = user("s09", "b");
  auto alice = login(qim, a);
  std::vector<uint64_t> ids;
  for (int i = 0; i < 5; ++i) {
    auto ack = alice->send(b, "h" + std::to_string(i), "h" + std::to_string(i));
    ASSERT_TRUE(ack.ok());
    ids.push_back(ack->message_id);
  }
  const auto c = conv(a, b);
  auto bob = login(qim, b);
  // Wait until the archiver has all five.
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (std::chrono::steady_clock::now() < deadline) {
    auto all = bob->history(c, std::nullopt, 50);
    ASSERT_TRUE(all.ok()) << all.error().to_string();
    if (all->entries.size() == 5) break;
    std::this_thread::sleep_for(50ms);
  }
  std::vector<std::string> seen;
  std::optional<uint64_t> before;
  for (int page = 0; page < 5; ++page) {
    auto p = bob->history(c, before, 2);
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    for (const auto& m : p->entries) seen.push_back(m.body);
    if (!p->more) break;
    ASSERT_FALSE(p->entries.empty());
    before = p->entries.back().message_id;
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"h4", "h3", "h2", "h1", "h0"}));
  auto newest = alice->history(c, std::nullopt, 1);
  ASSERT_TRUE(newest.ok());
  ASSERT_EQ(newest->entries.size(), 1u);
  EXPECT_EQ(newest->entries[0].message_id, ids.back());
  EXPECT_TRUE(newest->more);
}

// 10. MailboxNode restart mid-stream: nothing lost; the frontier stays contiguous.
TEST(E2E, S10_RestartMidStream) {
  auto& qim = shared_qim();
  const auto a = user("s10", "a"), b = user("s10", "b");
  constexpr int kTotal = 60;
  std::set<int> acked;
  auto send_from = [&](int first) {
    auto alice = login(qim, a);
    if (!alice) return;
    for (int i = first; i < kTotal; ++i) {
      if (acked.count(i)) continue;
      auto r = alice->send(b, "m" + std::to_string(i), std::to_string(i));
      if (!r.ok()) return;  // the process went away: resume after the restart
      acked.insert(i);
    }
  };
  {
    auto alice = login(qim, a);
    for (int i = 0; i < kTotal / 2; ++i) {
      ASSERT_TRUE(alice->send(b, "m" + std::to_string(i), std::to_string(i)).ok());
      acked.insert(i);
    }
    // In flight when the process dies: sent, maybe appended, not acknowledged.
    for (int i = kTotal / 2; i < kTotal / 2 + 5; ++i)
      alice->send_text(client::send_frame(b, "m" + std::to_string(i), std::to_string(i)));
    qim.kill();
  }
  ASSERT_TRUE(qim.start().ok());
  send_from(0);  // retries every unacknowledged message with its original client_msg_id
  ASSERT_EQ(acked.size(), static_cast<size_t>(kTotal));

  auto bob = login(qim, b);
  auto entries = sync_until(*bob, [&](const auto& e) { return e.size() >= kTotal; });
  ASSERT_EQ(entries.size(), static_cast<size_t>(kTotal)) << "lost or duplicated messages";
  std::set<std::string> ids;
  for (const auto& e : entries) ids.insert(e.client_msg_id);
  EXPECT_EQ(ids.size(), static_cast<size_t>(kTotal));
  expect_strictly_increasing(entries);
  auto page = bob->sync(0, 500);
  ASSERT_TRUE(page.ok());
  EXPECT_GE(page->frontier, entries.back().seq);  // everything shown is at or below the frontier
}

// 11. fanout replay from an earlier Outbox position: repeated observations reuse canonical sequences;
//     nothing shows twice.
TEST(E2E, S11_FanoutReplay) {
  auto& qim = shared_qim();
  const auto a = user("s11", "a"), b = user("s11", "b");
  auto alice = login(qim, a);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(alice->send(b, "m" + std::to_string(i), "m").ok());
  auto bob = login(qim, b);
  auto before = sync_until(*bob, [](const auto& e) { return e.size() >= 10; });
  ASSERT_EQ(before.size(), 10u);
  // Drain the pushes of the original deliveries.
  collect_delivered(*bob, 10, kQuiet);

  auto replay = http_request(qim.admin_port(), "POST", "/admin/fanout/replay?offset=0");
  ASSERT_EQ(replay.rfind("200", 0), 0u) << replay;
  // A marker in the same conversation (same Outbox partition) is fanned out after the replayed records.
  ASSERT_TRUE(alice->send(b, "marker", "after replay").ok());
  auto after = sync_until(*bob, [](const auto& e) { return has_cmid(e, "marker"); });
  ASSERT_EQ(after.size(), 11u) << "a replayed message showed twice (or one was lost)";
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(after[i].seq, before[i].seq) << "a repeated observation got a new sequence";
    EXPECT_EQ(after[i].message_id, before[i].message_id);
  }
  // Live: only the marker is pushed, none of the replayed messages again.
  auto pushed = collect_delivered(*bob, 1, kWait);
  auto more = collect_delivered(*bob, 100, kQuiet);
  pushed.insert(pushed.end(), more.begin(), more.end());
  ASSERT_EQ(pushed.size(), 1u);
  EXPECT_EQ(pushed[0].client_msg_id, "marker");
}

// 12. ownership change: a new epoch continues the shard; a node configured below the stored epoch refuses.
TEST(E2E, S12_OwnershipChange) {
  auto qim = new_process("s12");
  ASSERT_TRUE(qim->start({{"QIM_EPOCH", "1"}}).ok());
  const auto a = user("s12", "a"), b = user("s12", "b");
  ASSERT_TRUE(login(*qim, a)->send(b, "e1", "epoch one").ok());
  auto first = sync_until(*login(*qim, b), [](const auto& e) { return !e.empty(); });
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(MailboxSeq::from_raw(first[0].seq).epoch().value, 1u);
  ASSERT_EQ(qim->stop(), 0);

  ASSERT_TRUE(qim->start({{"QIM_EPOCH", "2"}}).ok()) << qim->log_tail();
  ASSERT_TRUE(login(*qim, a)->send(b, "e2", "epoch two").ok());
  auto both = sync_until(*login(*qim, b), [](const auto& e) { return e.size() >= 2; });
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].client_msg_id, "e1");
  EXPECT_EQ(both[1].client_msg_id, "e2");
  EXPECT_EQ(MailboxSeq::from_raw(both[1].seq).epoch().value, 2u);
  expect_strictly_increasing(both);
  ASSERT_EQ(qim->stop(), 0);

  // Back to epoch 1 while the store holds epoch 2: fail closed, exit code 2 (refused).
  int code = qim->run_expecting_exit({{"QIM_EPOCH", "1"}}, std::chrono::seconds(60));
  EXPECT_EQ(code, 2) << qim->log_tail();
  EXPECT_NE(qim->log_tail().find("poch"), std::string::npos);
}

// 13. retention, on every store, through the product: messages sent "on day 0"; qim restarted two
//     simulated days later (QIM_TEST_CLOCK_OFFSET_MS, QIM_MAILBOX_RETENTION_MS=60000) where the shard
//     owner's retention sweep runs by itself. Then the expired entries are gone, the trim moved (a cursor
//     below it is EXPIRED_CURSOR), entries of the new day stay through later rounds, and the sweep's
//     counters show on /metrics. On the embedded store a proof row is also deleted while qim is stopped
//     (through the embedded backend): that mailbox fails closed (UNAVAILABLE) and its sweep counts an error.
TEST(E2E, S13_Retention) {
  const Env fast_sweep = {{"QIM_MAILBOX_RETENTION_MS", "60000"},
                          {"QIM_RETENTION_SWEEP_INTERVAL_MS", "200"},
                          {"QIM_RETENTION_SWEEP_BATCH", "2"}};  // several rounds per pass
  auto qim = new_process("s13");
  ASSERT_TRUE(qim->start(fast_sweep).ok()) << qim->log_tail();
  const auto a = user("s13", "a"), b = user("s13", "b"), c = user("s13", "c");
  auto alice = login(*qim, a);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(alice->send(b, "old" + std::to_string(i), "old").ok());
  ASSERT_TRUE(alice->send(c, "old-c", "old").ok());
  auto bob_old = sync_until(*login(*qim, b), [](const auto& e) { return e.size() >= 3; });
  ASSERT_EQ(bob_old.size(), 3u);
  ASSERT_EQ(sync_until(*login(*qim, c), [](const auto& e) { return !e.empty(); }).size(), 1u);
  EXPECT_EQ(metric(*qim, "qim_retention_buckets_expired_total"), 0) << "nothing is past retention on day 0";
  alice.reset();
  ASSERT_EQ(qim->stop(), 0);

  const bool embedded = backend_under_test() == "embedded";
#ifdef QIM_E2E_HAVE_EMBEDDED
  if (embedded) {  // c's proof row is lost: its mailbox must fail closed rather than skip the bucket
    BackendContext context;
    context.shards = *ShardMap::create(16);
    context.clock = std::make_shared<SystemClock>();
    auto backend = open_embedded_backend(context, qim->data_dir() + "/mailbox");
    ASSERT_TRUE(backend.ok()) << backend.error().to_string();
    ASSERT_TRUE(
        embedded_backend_drop_proof(**backend, *UserId::parse(c), day_bucket_of(SystemClock().now_ms()))
            .ok());
  }
#endif

  // Two days later: day 0's buckets are past retention; the sweeper runs at once and every 200 ms.
  Env later = fast_sweep;
  later["QIM_TEST_CLOCK_OFFSET_MS"] = std::to_string(2 * kDayMs);
  ASSERT_TRUE(qim->start(later).ok()) << qim->log_tail();
  ASSERT_TRUE(login(*qim, a)->send(b, "new", "on day 2").ok());
  auto bob = login(*qim, b);
  auto fresh = sync_until(
      *bob, [](const auto& e) { return !e.empty(); }, bob_old.back().seq);
  ASSERT_EQ(fresh.size(), 1u);
  // Wait for two whole passes after the new entry is visible: each sweeps b (and a, c) once more.
  const double passes = metric(*qim, "qim_retention_passes_total");
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (metric(*qim, "qim_retention_passes_total") < passes + 2 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(50ms);
  ASSERT_GE(metric(*qim, "qim_retention_passes_total"), passes + 2) << qim->log_tail();

  auto now_visible = sync_all(*bob);
  ASSERT_TRUE(now_visible);
  ASSERT_EQ(now_visible->size(), 1u) << "expired entries are still readable, or the new one is gone";
  EXPECT_EQ((*now_visible)[0].client_msg_id, "new");
  EXPECT_GT((*now_visible)[0].seq, bob_old.back().seq);
  auto expired = bob->sync(bob_old.front().seq, 10);
  ASSERT_FALSE(expired.ok()) << "the trim did not move past day 0";
  EXPECT_EQ(expired.error().message().rfind("EXPIRED_CURSOR", 0), 0u) << expired.error().message();
  auto at_trim = bob->sync(bob_old.back().seq, 10);  // the trim is day 0's last seq: a valid cursor
  ASSERT_TRUE(at_trim.ok()) << at_trim.error().to_string();
  ASSERT_EQ(at_trim->entries.size(), 1u);
  EXPECT_EQ(at_trim->entries[0].client_msg_id, "new");

  // a's, b's (and c's, unless its proof is gone) day-0 buckets; the sweep's counters are on /metrics.
  EXPECT_GE(metric(*qim, "qim_retention_buckets_expired_total"), embedded ? 2 : 3);
  EXPECT_GE(metric(*qim, "qim_retention_users_swept_total"), 3);
  EXPECT_GT(metric(*qim, "qim_retention_last_round_timestamp_ms"), SystemClock().now_ms() + kDayMs);
  auto carol = login(*qim, c)->sync(0, 10);
  if (embedded) {
    ASSERT_FALSE(carol.ok()) << "a mailbox with a missing proof was read";
    EXPECT_EQ(carol.error().message().rfind("UNAVAILABLE", 0), 0u) << carol.error().message();
    EXPECT_GE(metric(*qim, "qim_retention_errors_total"), 2) << "c's sweep fails on every pass";
  } else {
    ASSERT_TRUE(carol.ok()) << carol.error().to_string();
    EXPECT_TRUE(carol->entries.empty());
    // (A sweep may lose its ledger compare-and-set to the new entry's registration: an error, retried.)
    EXPECT_NE(http_request(qim->admin_port(), "GET", "/metrics").find("\nqim_retention_errors_total "),
              std::string::npos);
  }
  EXPECT_EQ(qim->stop(), 0);
}

// 11b. A fanout replay from before the Outbox retention horizon (QIM_OUTBOX_RETENTION_MS, default 7 days)
//      is refused, naming the horizon: through `qim replay-fanout` on a stopped instance (exit code 2,
//      nothing rewound) and POST /admin/fanout/replay on a running one (400). The instance clock is moved
//      eight days ahead with QIM_TEST_CLOCK_OFFSET_MS.
TEST(E2E, S11b_ReplayRefusedBeforeTheOutboxRetentionHorizon) {
  auto qim = new_process("s11b");
  ASSERT_TRUE(qim->start().ok()) << qim->log_tail();
  const auto a = user("s11b", "a"), b = user("s11b", "b");
  auto alice = login(*qim, a);
  ASSERT_TRUE(alice->send(b, "m1", "one").ok());
  ASSERT_TRUE(alice->send(b, "m2", "two").ok());
  ASSERT_EQ(sync_until(*login(*qim, b), [](const auto& e) { return e.size() >= 2; }).size(), 2u);
  alice.reset();
  ASSERT_EQ(qim->stop(), 0);

  // `qim replay-fanout` against the stopped instance, with the base environment plus `extra`.
  auto replay = [&](const Env& extra, std::string& output) {
    Env env = qim->base_env();
    for (const auto& [k, v] : extra) env[k] = v;
    std::string command;
    for (const auto& [k, v] : env) command += k + "='" + v + "' ";
    command += std::string(QIM_BINARY) + " replay-fanout --from 0 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return -1;
    char buf[4096];
    output.clear();
    while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
    const int status = ::pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  const Env eight_days_later = {{"QIM_TEST_CLOCK_OFFSET_MS", std::to_string(8 * kDayMs)}};
  std::string out;
  EXPECT_EQ(replay(eight_days_later, out), 2) << out;
  EXPECT_NE(out.find("before the retention horizon"), std::string::npos) << out;
  EXPECT_NE(out.find("QIM_OUTBOX_RETENTION_MS=604800000"), std::string::npos) << out;
  // Within the horizon (here: the wall clock, a few seconds after the sends) the same replay is accepted.
  EXPECT_EQ(replay({}, out), 0) << out;
  EXPECT_NE(out.find("fanout will replay from offset 0"), std::string::npos) << out;

  // A running instance eight days later refuses the admin replay too.
  ASSERT_TRUE(qim->start(eight_days_later).ok()) << qim->log_tail();
  const std::string answer = http_request(qim->admin_port(), "POST", "/admin/fanout/replay?offset=0");
  EXPECT_EQ(answer.rfind("400 ", 0), 0u) << answer;
  EXPECT_NE(answer.find("before the retention horizon"), std::string::npos) << answer;
  EXPECT_EQ(qim->stop(), 0);
}

// 14. burst: a burst to one shard is finished in pages (mean page > 1) with every message delivered.
TEST(E2E, S14_BurstInPages) {
  auto& qim = shared_qim();
  const auto b = user("s14", "b");
  const uint32_t shard = ShardMap::create(16)->shard_of(*UserId::parse(b)).value;
  const std::string label = "{shard=\"" + std::to_string(shard) + "\"}";
  const double pages0 = metric(qim, "qim_node_pages_total" + label);
  const double paged0 = metric(qim, "qim_node_paged_records_total" + label);
  // Four senders, 100 messages each, as fast as their connections take them (within the per-connection
  // frame rate), all into b's mailbox: one shard's worker gets them queued faster than it finishes them.
  constexpr int kSenders = 4, kEach = 100, kBurst = kSenders * kEach;
  std::vector<std::unique_ptr<Client>> senders;
  for (int s = 0; s < kSenders; ++s) senders.push_back(login(qim, user("s14", "a" + std::to_string(s))));
  for (int i = 0; i < kEach; ++i) {
    for (int s = 0; s < kSenders; ++s) {
      senders[s]->send_text(
          client::send_frame(b, "b" + std::to_string(s) + "-" + std::to_string(i), "burst"));
    }
  }
  for (auto& sender : senders) {
    for (int i = 0; i < kEach; ++i) ASSERT_TRUE(sender->wait_type("SEND_ACK", kWait).ok()) << i;
  }
  auto bob = login(qim, b);
  auto entries = sync_until(*bob, [&](const auto& e) { return e.size() >= kBurst; });
  ASSERT_EQ(entries.size(), static_cast<size_t>(kBurst));
  expect_strictly_increasing(entries);
  const double pages = metric(qim, "qim_node_pages_total" + label) - pages0;
  const double paged = metric(qim, "qim_node_paged_records_total" + label) - paged0;
  ASSERT_GT(pages, 0) << "no pages on shard " << shard;
  RecordProperty("mean_page", std::to_string(paged / pages));
  std::printf("burst of %d on shard %u: %.0f records in %.0f pages (mean page %.2f)\n", kBurst, shard, paged,
              pages, paged / pages);
  // Stores that declare a page limit of 1 (redis, scylla-lwt; or QIM_MAILBOX_FINISH_PAGE_MAX=1) finish
  // record by record; the others must have finished this burst in pages.
  const char* page_max = std::getenv("QIM_MAILBOX_FINISH_PAGE_MAX");
  const bool pages_of_one = backend_under_test() == "redis" || backend_under_test() == "scylla-lwt" ||
                            (page_max != nullptr && std::string(page_max) == "1");
  if (pages_of_one) {
    EXPECT_EQ(paged, pages) << "a store with page limit 1 finished several records in one page";
  } else {
    EXPECT_GT(paged / pages, 1.0) << paged << " records in " << pages << " pages";
  }
}

// 15. bad input: malformed frames, unknown types, oversize bodies, wrong types, sending as someone else:
//     a clear error frame, nothing stored, the server keeps serving.
TEST(E2E, S15_BadInput) {
  auto& qim = shared_qim();
  const auto a = user("s15", "a"), b = user("s15", "b"), victim = user("s15", "v");
  auto alice = login(qim, a);
  struct Case {
    std::string frame;
    std::string code;
  };
  const std::vector<Case> cases = {
      {"{not json", "BAD_FRAME"},
      {"[]", "BAD_FRAME"},
      {R"({"no":"type"})", "BAD_FRAME"},
      {R"({"type":"LAUNCH_MISSILES"})", "UNKNOWN_TYPE"},
      {R"({"type":"SEND","client_msg_id":"x1","to":")" + b + R"(","body":")" + std::string(20'000, 'x') +
           "\"}",
       "TOO_LARGE"},
      {R"({"type":"SEND","client_msg_id":"x2","to":")" + b + R"(","body":["not","a","string"]})",
       "INVALID_ARGUMENT"},
      {R"({"type":"SEND","client_msg_id":42,"to":")" + b + R"(","body":"x"})", "INVALID_ARGUMENT"},
      {R"({"type":"SYNC","after":"minus one"})", "INVALID_ARGUMENT"},
      {R"({"type":"SEND","client_msg_id":"x3","to":")" + b + R"(","body":"x","sender":")" + victim + "\"}",
       "FORBIDDEN"},
      {R"({"type":"SEND","client_msg_id":"x4","conversation":")" + conv(victim, b) + R"(","body":"x"})",
       "FORBIDDEN"},
  };
  for (const auto& c : cases) {
    alice->send_text(c.frame);
    auto e = alice->wait_type("ERROR", kWait);
    ASSERT_TRUE(e.ok()) << c.frame.substr(0, 80) << ": " << e.error().to_string();
    EXPECT_EQ(e->code, c.code) << c.frame.substr(0, 80) << " -> " << e->raw;
    EXPECT_FALSE(e->message.empty());
  }
  // A frame over the frame limit closes that connection (1009); the server keeps serving others.
  auto big = login(qim, a, "big");
  big->send_text(std::string(200'000, ' '));
  EXPECT_EQ(big->wait_type("never", kWait).code(), Errc::kTransport);
  EXPECT_EQ(big->close_code(), 1009);

  // Nothing was stored: b's mailbox and the victim's conversation are empty.
  ASSERT_TRUE(alice->send(b, "ok", "a valid message after all that").ok());  // still serving
  auto bob = login(qim, b);
  auto entries = sync_until(*bob, [](const auto& e) { return has_cmid(e, "ok"); });
  ASSERT_EQ(entries.size(), 1u) << "a refused SEND was stored";
  EXPECT_EQ(entries[0].sender, a);
  auto victim_mailbox = sync_all(*login(qim, victim));
  ASSERT_TRUE(victim_mailbox);
  EXPECT_TRUE(victim_mailbox->empty());
}

// 16. isolation: nobody can read another user's mailbox or a conversation they are not in.
TEST(E2E, S16_Isolation) {
  auto& qim = shared_qim();
  const auto a = user("s16", "a"), b = user("s16", "b"), eve = user("s16", "eve");
  auto e = login(qim, eve);
  auto bob = login(qim, b);
  ASSERT_TRUE(login(qim, a)->send(b, "secret", "for b only").ok());
  ASSERT_EQ(collect_delivered(*bob, 1, kWait).size(), 1u);
  EXPECT_TRUE(collect_delivered(*e, 1, kQuiet).empty()) << "eve got b's push";
  auto eves = sync_all(*e);
  ASSERT_TRUE(eves);
  EXPECT_TRUE(eves->empty()) << "eve's SYNC returned someone else's entries";
  // No frame field can point SYNC at another mailbox: extra fields are ignored, never obeyed.
  e->send_text(R"({"type":"SYNC","ref":"x","user":")" + b + R"(","mailbox":")" + b + "\"}");
  auto sneaky = e->wait_ref("x", kWait);
  ASSERT_TRUE(sneaky.ok());
  EXPECT_TRUE(sneaky->entries.empty());
  auto history = e->history(conv(a, b), std::nullopt, 50);
  ASSERT_FALSE(history.ok());
  EXPECT_EQ(history.error().message().rfind("FORBIDDEN", 0), 0u);
  auto post = e->send_to_conversation(conv(a, b), "in", "let me in");
  ASSERT_FALSE(post.ok());
  EXPECT_EQ(post.error().message().rfind("FORBIDDEN", 0), 0u);

  // Names (issue 8, item 1). Users whose names are near-spellings of each other read their own mailbox
  // only; ':' is no name character, so no id can spell two conversations, and nobody gets a token, a
  // message or a history page through one.
  const std::string dotted = a + ".b", at = a + "@x";
  auto d = login(qim, dotted);
  ASSERT_TRUE(login(qim, a)->send(dotted, "n1", "a to a.b").ok());
  ASSERT_TRUE(login(qim, at)->send(eve, "n2", "a@x to eve").ok());
  auto dotted_mailbox = sync_until(*d, [](const auto& got) { return has_cmid(got, "n1"); });
  ASSERT_EQ(dotted_mailbox.size(), 1u);
  EXPECT_EQ(dotted_mailbox[0].sender, a);
  auto a_mailbox = sync_all(*login(qim, a));
  ASSERT_TRUE(a_mailbox);
  EXPECT_FALSE(has_cmid(*a_mailbox, "n2")) << "a read a@x's mailbox";
  auto ambiguous = e->history("d:" + a + ":" + b + ":" + eve, std::nullopt, 50);
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_EQ(ambiguous.error().message().rfind("INVALID_ARGUMENT", 0), 0u) << ambiguous.error().message();
  auto colon = e->send(a + ":" + b, "n3", "to a name with ':'");
  ASSERT_FALSE(colon.ok());
  EXPECT_NE(colon.error().message().find("':'"), std::string::npos) << colon.error().message();
  // `qim token` refuses such a name (exit 2, configuration or argument refused) and mints a normal one.
  auto qim_token = [&](const std::string& name) {
    const std::string cmd = "QIM_AUTH_SECRET=" + std::string(kSecret) + " '" + QIM_BINARY +
                            "' token --data-dir '" + qim.data_dir() + "' --user '" + name +
                            "' >/dev/null 2>&1";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(qim_token(a + ":" + b), 2);
  EXPECT_EQ(qim_token(dotted), 0);
}

}  // namespace
}  // namespace qim::e2e
