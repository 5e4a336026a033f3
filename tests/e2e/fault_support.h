#pragma once
// What the fault tests on the distributed deployment share (faults_test.cc, faults_engines_test.cc,
// faults_cluster_test.cc).

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "e2e/deployment.h"

namespace qim::e2e {

// Every process of the distributed deployment (e2e/deployment.h), by name.
extern const std::vector<std::string> kDistributedProcesses;

// The processes that do not answer /healthz (a crashed one does not), asked until all do or `within`
// passed (at least once).
std::vector<std::string> not_serving(const Deployment& qim, std::chrono::seconds within);

// The shards a node's /admin/pipeline lists, -1 if it does not answer.
int owned_shards(const Deployment& qim, const std::string& node);

// One recipient (a user of `scenario`) on each of `shards` shards, by shard.
std::map<uint32_t, std::string> one_recipient_per_shard(const std::string& scenario, uint32_t shards = 16);
// The same as a list (the nemesis load's recipients).
std::vector<std::string> recipients_on_every_shard(const std::string& scenario);

// A sample of one process's /metrics ("name" or "name{labels}"), -1 if it does not answer or lacks it.
double process_metric(const Deployment& qim, const std::string& process, const std::string& sample);

// Waits (`within` at most) until both nodes of a leased deployment hold shards and together all 16.
bool leases_settled(const Deployment& qim, std::chrono::seconds within = std::chrono::seconds(60));

}  // namespace qim::e2e
