// A planned shard hand-over on the distributed deployment (issue 11, `qim admin shard move`): two real
// MailboxNode processes on leases, messages flowing while the operator moves one shard from its owner to
// the other node. ctest label `faults` (QIM_E2E_DEPLOYMENT=distributed, as faults_test.cc).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "e2e/e2e_env.h"
#include "e2e/fault_support.h"
#include "e2e/scenario_helpers.h"

namespace qim::e2e {
namespace {

struct Command {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// `qim <args>` with the deployment's operator environment.
Command run_qim(Deployment& qim, const std::string& args) {
  std::string command;
  for (const auto& [k, v] : qim.operator_env()) command += k + "='" + v + "' ";
  command += std::string(QIM_BINARY) + " " + args + " 2>&1";
  Command out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.output.append(buf, n);
  const int status = ::pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

struct FrontierRow {
  uint64_t offset = 0;
  std::string owner;
  std::string lease_epoch;
  std::string moving_to;  // a pending move's target; empty when none
};
// `qim admin frontier show --shard S --json`, read by a process of its own: the rows by epoch.
std::map<uint32_t, FrontierRow> frontiers_of(Deployment& qim, uint32_t shard) {
  const Command c = run_qim(qim, "admin frontier show --json --shard " + std::to_string(shard));
  EXPECT_EQ(c.exit_code, 0) << c.output;
  std::map<uint32_t, FrontierRow> rows;
  static const std::regex row(
      R"re(\{"shard":(\d+),"epoch":(\d+),"offset":(\d+),[^}]*"owner":"([^"]*)","lease_epoch":"([^"]*)",)re"
      R"re("moving_to":(null|"([^"]*)")\})re");
  for (std::sregex_iterator it(c.output.begin(), c.output.end(), row), end; it != end; ++it) {
    rows[static_cast<uint32_t>(std::stoul((*it)[2]))] =
        FrontierRow{std::stoull((*it)[3]), (*it)[4].str(), (*it)[5].str(), (*it)[7].str()};
  }
  return rows;
}

// Injected: `qim admin shard move S --to OTHER` while a sender keeps sending to a recipient on shard S
// (nodes on leases, QIM_SHARD_LEASE_TTL_MS=6000 on redis). Checked through processes of their own (a fresh
// client, `qim admin frontier show`): the move completes with exit 0 at a higher epoch; every acknowledged
// message shows exactly once, in order; the shard's frontier has a row at the new epoch owned by the target,
// and the old epoch's row stops moving once the move is done (the old owner no longer writes) while the
// messages sent afterwards are all at the new epoch.
TEST(Faults, AShardMovedByTheOperatorKeepsEveryMessageOnceAtTheNextEpoch) {
  if (deployment_under_test() != "distributed")
    GTEST_SKIP() << "set QIM_E2E_DEPLOYMENT=distributed (with QIM_KAFKA_BROKERS, QIM_ROUTING_REDIS and "
                    "QIM_E2E_BACKEND=redis|scylla) to run the fault tests";
  auto qim = new_deployment("fault-move", Ownership::kLeases);
  // Shorter scans on redis; on scylla the margin is the 5 s CQL timeout, so the default 10 s ttl stays.
  const Env leases = backend_under_test() == "scylla" ? Env{} : Env{{"QIM_SHARD_LEASE_TTL_MS", "6000"}};
  ASSERT_TRUE(qim->start(leases).ok()) << qim->log_tail();
  const auto by_shard = one_recipient_per_shard("fmove");
  constexpr uint32_t kShard = 5;
  const std::string r = by_shard.at(kShard);
  auto sender = login_at(qim->gateway_ports()[0], user("fmove", "sender"));
  ASSERT_TRUE(sender);
  std::vector<std::string> acked;
  int n = 0;
  auto send_one = [&](const char* phase) {
    const std::string cmid = "v" + std::to_string(n++);
    auto ack = sender->send(r, cmid, phase);
    ASSERT_TRUE(ack.ok()) << ack.error().to_string();
    acked.push_back(cmid);
  };

  // The shard's owner once its first messages are in and both nodes hold shards (the leases settled).
  std::string from;
  const auto settle = std::chrono::steady_clock::now() + 60s;
  for (int i = 0; i < 5; ++i) send_one("before");
  while (true) {
    auto rows = frontiers_of(*qim, kShard);
    const bool settled = owned_shards(*qim, "mailbox-1") > 0 && owned_shards(*qim, "mailbox-2") > 0 &&
                         owned_shards(*qim, "mailbox-1") + owned_shards(*qim, "mailbox-2") == 16;
    if (!rows.empty() && settled && rows.rbegin()->second.owner.find("-node-") != std::string::npos) {
      from = rows.rbegin()->second.owner;
      break;
    }
    ASSERT_LT(std::chrono::steady_clock::now(), settle) << "shard " << kShard << " never got an owner\n"
                                                        << qim->log_tail();
    std::this_thread::sleep_for(200ms);
  }
  const std::string to = from.substr(0, from.size() - 1) + (from.back() == '1' ? "2" : "1");
  const uint32_t old_epoch = frontiers_of(*qim, kShard).rbegin()->first;

  // The move runs (and waits) in a process of its own while messages keep coming.
  auto move = std::async(std::launch::async, [&] {
    return run_qim(*qim, "admin shard move " + std::to_string(kShard) + " --to " + to + " --timeout 60");
  });
  // While it waits, `frontier show` names the pending move's target: sampled beside the sender (each sample
  // is a process of its own), and checked once three samples were read during the move (the move records
  // itself within its first moments, so the later samples fall in it).
  const auto move_started = std::chrono::steady_clock::now();
  std::atomic<bool> move_done{false};
  auto sampler = std::async(std::launch::async, [&] {
    std::pair<int, bool> samples_seen{0, false};
    while (!move_done.load() && !samples_seen.second) {
      const auto now = frontiers_of(*qim, kShard);
      samples_seen.second = !now.empty() && now.rbegin()->second.moving_to == to;
      ++samples_seen.first;
    }
    return samples_seen;
  });
  while (move.wait_for(100ms) != std::future_status::ready) send_one("during");
  const Command moved = move.get();
  move_done = true;
  const auto [samples, saw_pending] = sampler.get();
  std::cout << "move took " << (std::chrono::steady_clock::now() - move_started) / 1ms << " ms; " << samples
            << " frontier samples; pending target shown: " << (saw_pending ? "yes" : "no") << "\n";
  if (samples >= 3) {
    EXPECT_TRUE(saw_pending) << "frontier show never named the pending move's target " << to;
  }
  std::cout << moved.output;
  ASSERT_EQ(moved.exit_code, 0) << moved.output << qim->log_tail();
  EXPECT_NE(moved.output.find("moved from " + from), std::string::npos) << moved.output;
  const size_t sent_by_move_end = acked.size();
  EXPECT_GT(sent_by_move_end, 10u) << "hardly any message was sent while the shard moved";
  for (int i = 0; i < 10; ++i) send_one("after");

  // A fresh client: every acknowledged message once, in order; those sent after the move at a new epoch.
  auto reader = login(*qim, r);
  ASSERT_TRUE(reader);
  auto entries = sync_until(*reader, [&](const auto& e) { return e.size() >= acked.size(); });
  ASSERT_EQ(entries.size(), acked.size()) << "lost or shown twice\n" << qim->log_tail();
  for (size_t i = 0; i < acked.size(); ++i) EXPECT_EQ(entries[i].client_msg_id, acked[i]) << "at " << i;
  expect_strictly_increasing(entries);
  const auto epoch_of = [](uint64_t seq) { return static_cast<uint32_t>(seq >> 48); };
  EXPECT_EQ(epoch_of(entries.front().seq), old_epoch);
  for (size_t i = sent_by_move_end; i < entries.size(); ++i)
    EXPECT_GT(epoch_of(entries[i].seq), old_epoch) << entries[i].client_msg_id << " not at the new epoch";

  // The frontier, read by another process: the new epoch's row is the target's; the old one is final.
  const auto rows = frontiers_of(*qim, kShard);
  ASSERT_TRUE(rows.contains(old_epoch));
  const uint32_t new_epoch = rows.rbegin()->first;
  EXPECT_GT(new_epoch, old_epoch);
  EXPECT_EQ(rows.rbegin()->second.owner, to);
  EXPECT_EQ(rows.rbegin()->second.lease_epoch, std::to_string(new_epoch));
  EXPECT_EQ(rows.rbegin()->second.moving_to, "") << "the move is done but still shown as pending";
  for (int i = 0; i < 5; ++i) send_one("last");
  entries = sync_until(*reader, [&](const auto& e) { return e.size() >= acked.size(); });
  ASSERT_EQ(entries.size(), acked.size());
  const auto final_rows = frontiers_of(*qim, kShard);
  EXPECT_EQ(final_rows.at(old_epoch).offset, rows.at(old_epoch).offset)
      << "the old owner wrote after the move";
  EXPECT_GT(final_rows.at(new_epoch).offset, rows.at(new_epoch).offset);

  // A second move of the same shard to the node that holds it now changes nothing and says so.
  const Command again = run_qim(*qim, "admin shard move " + std::to_string(kShard) + " --to " + to);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("already owned by " + to), std::string::npos) << again.output;
  EXPECT_EQ(qim->stop(), 0) << qim->log_tail();
}

}  // namespace
}  // namespace qim::e2e
