// End-to-end scenarios 10-14 of SYSTEM.md section 5 (operations: restart, fanout replay, ownership change,
// retention, bursts), over real WebSockets against a real `qim up`.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/sharding.h"
#include "e2e/e2e_env.h"
#include "e2e/scenario_helpers.h"
#include "mailbox/contract_store.h"
#include "mailbox/store_options.h"
#include "outbox/outbox_record.h"

#if __has_include("mailbox/embedded/embedded_backend.h")
#include "mailbox/embedded/embedded_backend.h"
#define QIM_E2E_HAVE_EMBEDDED 1
#endif

namespace qim::e2e {
namespace {

// 10. MailboxNode restart mid-stream: nothing lost; the frontier stays contiguous. (`qim up`: the process
//     is killed; distributed: the MailboxNode processes are, while the gateways keep taking SENDs.)
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
    qim.kill_nodes();
  }
  ASSERT_TRUE(qim.start_nodes().ok()) << qim.log_tail();
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

  auto replay = http_request(qim.fanout_admin_port(), "POST", "/admin/fanout/replay?offset=0");
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
  auto qim = new_deployment("s12");
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
  auto qim = new_deployment("s13");
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
    context.shards = *ShardMap::create(qim->shard_count());  // as the process last started it
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
    EXPECT_NE(metrics_text(*qim).find("\nqim_retention_errors_total "), std::string::npos);
  }
  EXPECT_EQ(qim->stop(), 0);
}

// 11b. A fanout replay from before the Outbox retention horizon (QIM_OUTBOX_RETENTION_MS, default 7 days)
//      is refused, naming the horizon: through `qim replay-fanout` on a stopped instance (exit code 2,
//      nothing rewound) and POST /admin/fanout/replay on a running one (400). The instance clock is moved
//      eight days ahead with QIM_TEST_CLOCK_OFFSET_MS.
TEST(E2E, S11b_ReplayRefusedBeforeTheOutboxRetentionHorizon) {
  auto qim = new_deployment("s11b");
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
    Env env = qim->operator_env();
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
  const std::string answer = http_request(qim->fanout_admin_port(), "POST", "/admin/fanout/replay?offset=0");
  EXPECT_EQ(answer.rfind("400 ", 0), 0u) << answer;
  EXPECT_NE(answer.find("before the retention horizon"), std::string::npos) << answer;
  EXPECT_EQ(qim->stop(), 0);
}

// 14. burst: a burst to one shard is finished in pages (mean page > 1) with every message delivered.
TEST(E2E, S14_BurstInPages) {
  auto& qim = shared_qim();
  const auto b = user("s14", "b");
  const uint32_t shard = ShardMap::create(qim.shard_count())->shard_of(*UserId::parse(b)).value;
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

}  // namespace
}  // namespace qim::e2e
