#include "e2e/fault_support.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "core/sharding.h"
#include "e2e/e2e_env.h"
#include "e2e/qim_process.h"

namespace qim::e2e {

const std::vector<std::string> kDistributedProcesses = {"mailbox-1", "mailbox-2", "archiver",
                                                        "fanout",    "gateway-1", "gateway-2"};

std::vector<std::string> not_serving(const Deployment& qim, std::chrono::seconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  std::vector<std::string> down;
  do {
    down.clear();
    for (const auto& name : kDistributedProcesses) {
      auto port = qim.admin_port_of(name);
      if (!port.ok() || http_request(*port, "GET", "/healthz").rfind("200 ", 0) != 0) down.push_back(name);
    }
    if (!down.empty() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
  } while (!down.empty() && std::chrono::steady_clock::now() < deadline);
  return down;
}

std::map<uint32_t, std::string> one_recipient_per_shard(const std::string& scenario, uint32_t shards) {
  const auto shard_map = *ShardMap::create(shards);
  std::map<uint32_t, std::string> by_shard;
  for (int i = 0; by_shard.size() < shards && i < 10'000; ++i) {
    const auto r = user(scenario, "r" + std::to_string(i));
    by_shard.try_emplace(shard_map.shard_of(*UserId::parse(r)).value, r);
  }
  EXPECT_EQ(by_shard.size(), shards) << "no user found for every shard";
  return by_shard;
}

std::vector<std::string> recipients_on_every_shard(const std::string& scenario) {
  std::vector<std::string> out;
  for (const auto& [shard, r] : one_recipient_per_shard(scenario)) out.push_back(r);
  return out;
}

double process_metric(const Deployment& qim, const std::string& process, const std::string& sample) {
  auto port = qim.admin_port_of(process);
  if (!port.ok()) return -1;
  const std::string text = http_request(*port, "GET", "/metrics");
  if (text.rfind("200 ", 0) != 0) return -1;
  for (size_t at = text.find(sample + " "); at != std::string::npos; at = text.find(sample + " ", at + 1)) {
    if (at == 0 || text[at - 1] == '\n') return std::strtod(text.c_str() + at + sample.size() + 1, nullptr);
  }
  return -1;
}

bool leases_settled(const Deployment& qim, std::chrono::seconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  for (;;) {
    const int a = owned_shards(qim, "mailbox-1"), b = owned_shards(qim, "mailbox-2");
    if (a > 0 && b > 0 && a + b == 16) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

int owned_shards(const Deployment& qim, const std::string& node) {
  auto port = qim.admin_port_of(node);
  if (!port.ok()) return -1;
  const std::string body = http_request(*port, "GET", "/admin/pipeline");
  if (body.rfind("200 ", 0) != 0) return -1;
  int n = 0;
  for (size_t at = body.find("\"shard\":"); at != std::string::npos; at = body.find("\"shard\":", at + 1))
    ++n;
  return n;
}

}  // namespace qim::e2e
