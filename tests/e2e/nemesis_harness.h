#pragma once
// What the partition tests and the randomized schedule share (issue 42, items 1 and 5): a distributed
// deployment whose processes leave from their own loopback addresses (e2e/nemesis_net.h), the engines
// they use, the test's nftables table, and the load of e2e/nemesis_load.h recorded into one history;
// after healing, the judgement by the history checker.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "checker/op_history.h"
#include "e2e/deployment.h"
#include "e2e/nemesis_load.h"
#include "e2e/nemesis_net.h"

namespace qim::e2e {

double seconds(NemesisClock::duration d);

// A deployment whose processes leave from their own addresses, the engines they use and the test's rules.
struct Partitioned {
  std::unique_ptr<Deployment> qim;
  std::map<std::string, std::string> address;
  Env env;  // what the processes were started with (a restarted one gets it again)
  Engines engines;
  std::unique_ptr<NetNemesis> net;
  std::unique_ptr<checker::HistoryRecorder> h;
  std::vector<std::unique_ptr<NemesisSender>> senders;
  // The client loop of the first recipient and of the first sender, throughout.
  std::vector<std::unique_ptr<NemesisWatcher>> watchers;
  NemesisClock::time_point began = NemesisClock::now();

  // The longest a sender went without an acknowledgement.
  double longest_gap() const;
};

// Starts the deployment `name` with its addresses and `env`, opens the rules' table, and starts a sender on
// each gateway to `recipients` and a watcher (the client loop) for the first recipient and the first sender;
// fails the test (fatally: call it in ASSERT_NO_FATAL_FAILURE) if any step fails, naming it (nft missing, no
// CAP_NET_ADMIN, an engine variable unset).
void start(Partitioned& p, const std::string& name, Ownership ownership, const Env& env,
           const std::vector<std::string>& recipients, const std::string& scenario);

// After healing: the load acknowledged again on both gateways, every SEND not acknowledged retried with its
// key, the history judged, every process serving and stopping cleanly, the rules seen to drop packets
// (unless `expect_drops` is false: a schedule that happened to inject no rule).
void heal_and_judge(Partitioned& p, const std::string& scenario, NemesisClock::time_point healed_at,
                    bool expect_drops = true);

}  // namespace qim::e2e
