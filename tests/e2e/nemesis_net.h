#pragma once
// Real partitions on this machine for the nemesis tests (issue 42, item 1; decision 84). Each process of
// the distributed deployment gets its own loopback address (127.0.4.N) as the source of every connection
// it opens (the LD_PRELOAD shim nemesis_preload.c); each engine is told apart by its address and port
// (QIM_KAFKA_BROKERS, QIM_MAILBOX_REDIS or QIM_CQL_HOSTS, QIM_ROUTING_REDIS). A link is then one (process
// address, engine address:port) pair, cut or made lossy (nftables) in either direction, or delayed (the
// shim).
//
// What this touches, and nothing else: one nftables table of its own (`inet qim_nemesis_<pid>`, deleted
// whole when the object goes; no other table is read or flushed), whose rules match loopback packets
// (`oifname "lo"`) between the test's own addresses and its engines' ports. A delay is not a rule: this
// kernel has no tc netem (nor prio), so the shim delays each write of the process on the link's socket,
// from a file of the test's own (delay_file_for).

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "e2e/deployment.h"

namespace qim::e2e {

// An engine endpoint ("127.0.0.1:46092").
struct Endpoint {
  std::string host;
  uint16_t port = 0;
};

// The engines of the distributed deployment under test, from the variables the processes get: Kafka (the
// first broker of QIM_KAFKA_BROKERS), the routing Redis (QIM_ROUTING_REDIS) and the mailbox Redis instances
// (QIM_MAILBOX_REDIS; the first one also holds the shard leases), or on the scylla store the CQL hosts
// (QIM_CQL_HOSTS, port 9042; they hold the leases too). InvalidArgument naming a variable that is missing
// or malformed.
struct Engines {
  Endpoint kafka, routing;
  std::vector<Endpoint> mailbox;
  static Result<Engines> from_env();
};

// The delay file the shim of the process with source address `address` reads (one per test process).
std::string delay_file_for(const std::string& address);

// Gives every process of `qim` its source address (127.0.4.<10 + 6 * (pid % 40) + i>, in
// kDistributedProcesses's order: a block of six per test process)
// through the shim, for its next start; the addresses by process name.
Result<std::map<std::string, std::string>> give_addresses(Deployment& qim);

// Which packets of a link a rule drops: the process's to the engine, the engine's to the process, or both.
enum class Direction { kBoth, kToEngine, kFromEngine };

class NetNemesis {
 public:
  // Creates the test's nftables table and its output chain. Config, with nft's own words, if it
  // cannot (no nft, no CAP_NET_ADMIN): the test must fail then, not skip.
  static Result<std::unique_ptr<NetNemesis>> open();
  ~NetNemesis();
  NetNemesis(const NetNemesis&) = delete;
  NetNemesis& operator=(const NetNemesis&) = delete;

  // Drops every packet of the link (process address `from`, engine `to`) in direction `d`.
  Status cut(const std::string& from, const Endpoint& to, Direction d = Direction::kBoth);
  // Drops `percent` of the link's packets, each way, at random.
  Status lossy(const std::string& from, const Endpoint& to, int percent);
  // Delays every write of process `from` on its connections to `to` by `ms` (+/- `jitter_ms`): each request
  // on the link is that much late (the shim reads the process's delay file at each write).
  Status delay(const std::string& from, const Endpoint& to, int ms, int jitter_ms);
  // Removes every rule and delay file: the links are whole again. The packets dropped so far stay counted.
  Status heal();
  // The packets the rules dropped since open() (nft's counters): a rule that never matched shows here as
  // 0, e.g. a process that did not use its source address.
  uint64_t dropped();

 private:
  explicit NetNemesis(std::string table) : table_(std::move(table)) {}
  Status nft(const std::string& script);
  uint64_t counted();

  const std::string table_;
  uint64_t dropped_before_heal_ = 0;
  std::set<std::string> delay_files_;
};

}  // namespace qim::e2e
