#include "e2e/nemesis_harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <thread>

#include "e2e/e2e_env.h"
#include "e2e/fault_support.h"
#include "e2e/history_support.h"

namespace qim::e2e {

using Clock = NemesisClock;

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

double Partitioned::longest_gap() const {
  double s = 0;
  for (const auto& x : senders) s = std::max(s, seconds(x->longest_ack_gap()));
  return s;
}

// Starts the deployment `name` with its addresses and `env`, opens the rules' table, and starts a sender on
// each gateway to `recipients`; fails the test (fatally) if any step fails.
void start(Partitioned& p, const std::string& name, Ownership ownership, const Env& env,
           const std::vector<std::string>& recipients, const std::string& scenario) {
  auto engines = Engines::from_env();
  ASSERT_TRUE(engines.ok()) << engines.error().to_string();
  p.engines = *engines;
  auto net = NetNemesis::open();
  ASSERT_TRUE(net.ok()) << net.error().to_string();
  p.net = std::move(net).value();
  p.env = env;
  p.qim = new_deployment(name, ownership);
  auto addresses = give_addresses(*p.qim);
  ASSERT_TRUE(addresses.ok()) << addresses.error().to_string();
  p.address = *addresses;
  ASSERT_TRUE(p.qim->start(env).ok()) << p.qim->log_tail();
  if (ownership == Ownership::kLeases) {
    ASSERT_TRUE(leases_settled(*p.qim)) << p.qim->log_tail();
  }
  p.h = std::make_unique<checker::HistoryRecorder>(history_path(name));
  p.watchers.push_back(std::make_unique<NemesisWatcher>(*p.h, p.qim->gateway_ports(), recipients.front()));
  p.watchers.push_back(std::make_unique<NemesisWatcher>(*p.h, p.qim->gateway_ports(), user(scenario, "s1")));
  for (size_t g = 0; g < 2; ++g)
    p.senders.push_back(std::make_unique<NemesisSender>(
        *p.h, p.qim->gateway_ports(), g, user(scenario, "s" + std::to_string(g + 1)), recipients));
  ASSERT_TRUE(wait_for_acks(p.senders, Clock::time_point::min(), 20, 60s)) << "no load before the fault\n"
                                                                           << p.qim->log_tail();
}

// After healing: the load acknowledged again on both gateways, every SEND not acknowledged retried with its
// key, the history judged, every process serving and stopping cleanly, the rules seen to drop packets.
void heal_and_judge(Partitioned& p, const std::string& scenario, Clock::time_point healed_at,
                    bool expect_drops) {
  EXPECT_TRUE(wait_for_acks(p.senders, healed_at, 20, 60s)) << "the load is not acknowledged after healing\n"
                                                            << p.qim->log_tail();
  const double recover_s = p.longest_gap();
  const size_t retried = stop_and_retry(p.senders);
  // The loops see the retried SENDs too, then stop and record what they showed.
  std::this_thread::sleep_for(2s);
  for (auto& w : p.watchers) {
    w->stop();
    EXPECT_GT(w->frames(), 0u) << "a watcher received no frame";
  }
  auto report = judge(*p.h, *p.qim, p.senders);
  EXPECT_EQ(not_serving(*p.qim, 30s), std::vector<std::string>{}) << "a process died\n" << p.qim->log_tail();
  EXPECT_EQ(p.qim->stop(), 0) << p.qim->log_tail();
  const uint64_t dropped = p.net->dropped();
  if (expect_drops) {
    EXPECT_GT(dropped, 0u) << "the rules never matched a packet: the processes did not leave from their "
                              "addresses (the shim nemesis_preload.c), or the link is not used";
  }
  std::cerr << "[nemesis] " << scenario << ": the rules dropped " << dropped << " packets\n";
  print_figures(scenario, report, retried, recover_s, seconds(Clock::now() - p.began));
}

}  // namespace qim::e2e
