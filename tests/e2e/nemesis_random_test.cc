// A randomized nemesis schedule on the distributed deployment (issue 42, item 5; decision 86): from a seed,
// one fault after another on a deployment of nodes on leases under load from both gateways: a process
// paused (SIGSTOP) or killed (SIGKILL; a node, fanout or the archiver) and started again, a link between a
// process and an engine cut (both ways or one way), made lossy or delayed; each held for 1-8 s, then healed,
// then 1-4 s of calm. After the schedule every fault is healed, every SEND not acknowledged is sent again
// with its key, every mailbox is read and the history checker judges the whole run. The seed and each step
// are printed, so a failing run is rerun exactly (the faults' times follow the seed; the load's interleaving
// does not).
//
// QIM_NEMESIS_SEED (default 1) and QIM_NEMESIS_DURATION_S (default 30: the seed of the test command) pick
// the schedule; scripts/nemesis-random.sh runs seed after seed for a given time. ctest label nemesis; needs
// QIM_E2E_DEPLOYMENT=distributed (redis or scylla store), root and nftables, and fails if it cannot install
// its rules.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

#include "e2e/e2e_env.h"
#include "e2e/fault_support.h"
#include "e2e/nemesis_harness.h"

namespace qim::e2e {
namespace {

using Clock = NemesisClock;

uint64_t env_number(const char* name, uint64_t otherwise) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : otherwise;
}

TEST(Nemesis, RandomScheduleOfPausesKillsAndPartitionsLosesNothing) {
  if (deployment_under_test() != "distributed")
    GTEST_SKIP() << "runs on the distributed deployment only (QIM_E2E_DEPLOYMENT=distributed)";
  const uint64_t seed = env_number("QIM_NEMESIS_SEED", 1);
  const auto duration = std::chrono::seconds(env_number("QIM_NEMESIS_DURATION_S", 30));
  std::cout << "[ nemesis  ] random schedule: seed " << seed << ", " << duration.count()
            << " s (rerun: QIM_NEMESIS_SEED=" << seed << " QIM_NEMESIS_DURATION_S=" << duration.count() << ")"
            << std::endl;
  // 6 s as the fixed lease tests; on CQL the lease margin is at least its 5 s request timeout, which must
  // stay below two thirds of the ttl.
  const std::string ttl_ms = backend_under_test() == "redis" ? "6000" : "10000";
  Partitioned p;
  ASSERT_NO_FATAL_FAILURE(start(p, "nemesis-random-" + std::to_string(seed), Ownership::kLeases,
                                {{"QIM_SHARD_LEASE_TTL_MS", ttl_ms}, {"QIM_KAFKA_APPEND_TIMEOUT_MS", "3000"}},
                                recipients_on_every_shard("nemrd"), "nemrd"));
  std::mt19937_64 rng(seed);
  auto pick = [&rng](size_t n) { return static_cast<size_t>(rng() % n); };
  auto between = [&rng](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  std::vector<Endpoint> engines = {p.engines.kafka, p.engines.routing};
  for (const auto& e : p.engines.mailbox) engines.push_back(e);
  auto engine_name = [&](size_t i) {
    return i == 0   ? std::string("kafka")
           : i == 1 ? std::string("routing redis")
                    : "store " + std::to_string(i - 2);
  };

  const auto schedule_start = Clock::now();
  int faults = 0;
  while (Clock::now() - schedule_start < duration) {
    const std::string process = kDistributedProcesses[pick(kDistributedProcesses.size())];
    const size_t e = pick(engines.size());
    const int hold_s = between(1, 8);
    std::ostringstream step;
    step << "[nemesis] t=" << static_cast<int>(seconds(Clock::now() - schedule_start)) << " s: ";
    const size_t kind = pick(6);
    bool killed = false, paused = false;
    std::string restart;
    Status st;
    switch (kind) {
      case 0:
        step << "SIGSTOP " << process;
        st = p.qim->signal_process(process, SIGSTOP);
        paused = st.ok();
        break;
      case 1: {
        // Not a gateway: a restarted one listens on a new port, which the load's clients do not know.
        const std::string victim = kDistributedProcesses[pick(4)];
        step << "SIGKILL " << victim << ", started again after the hold";
        st = p.qim->kill_process(victim);
        killed = st.ok();
        restart = victim;
        break;
      }
      case 2:
        step << "cut " << process << " <-> " << engine_name(e);
        st = p.net->cut(p.address[process], engines[e], Direction::kBoth);
        break;
      case 3: {
        const bool to_engine = pick(2) == 0;
        step << "cut " << process << (to_engine ? " -> " : " <- ") << engine_name(e) << " (one way)";
        st = p.net->cut(p.address[process], engines[e],
                        to_engine ? Direction::kToEngine : Direction::kFromEngine);
        break;
      }
      case 4: {
        const int percent = between(10, 50);
        step << process << " <-> " << engine_name(e) << " loses " << percent << " %";
        st = p.net->lossy(p.address[process], engines[e], percent);
        break;
      }
      default: {
        const int ms = between(50, 400);
        step << process << " <-> " << engine_name(e) << " delayed " << ms << " ms";
        st = p.net->delay(p.address[process], engines[e], ms, ms / 4);
        break;
      }
    }
    step << " for " << hold_s << " s";
    std::cerr << step.str() << std::endl;
    ASSERT_TRUE(st.ok()) << "could not inject: " << st.error().to_string();
    ++faults;
    std::this_thread::sleep_for(std::chrono::seconds(hold_s));  // the fault's length
    if (paused) {
      ASSERT_TRUE(p.qim->signal_process(process, SIGCONT).ok());
    }
    if (killed) {
      ASSERT_TRUE(p.qim->start_process(restart, p.env).ok()) << p.qim->log_tail();
    }
    ASSERT_TRUE(p.net->heal().ok());
    std::this_thread::sleep_for(std::chrono::seconds(between(1, 4)));  // calm between faults
  }
  const auto healed_at = Clock::now();
  EXPECT_TRUE(leases_settled(*p.qim)) << "the shards are not held once each after the schedule\n"
                                      << p.qim->log_tail();
  std::cerr << "[nemesis] seed " << seed << ": " << faults << " faults in "
            << seconds(healed_at - schedule_start) << " s\n";
  heal_and_judge(p,
                 "random schedule, seed " + std::to_string(seed) + ", " + std::to_string(faults) + " faults",
                 healed_at, /*expect_drops=*/false);
}

}  // namespace
}  // namespace qim::e2e
