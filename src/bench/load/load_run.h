#pragma once
// One load run: N one-to-one pairs (sender -> receiver) over real WebSocket connections to one or more
// running gateways, driven at fixed offered rates. With several gateways pair i's receiver connects to
// gateway i mod G and its sender to gateway (i + 1) mod G, so every message crosses gateways (the
// distributed deployment's routing is on the measured path). Each message's client_msg_id is its index, so
// SEND_ACK and DELIVER are matched to the send time without a lookup table; latencies are kept per message.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/load/stats.h"
#include "client/client.h"
#include "core/status.h"

namespace qim::load {

// A server process whose CPU a step reports (the distributed deployment has one per role).
// Engines (Kafka, the store, Redis) and qim-load itself are shown beside the qim processes but not summed
// into the qim CPU figure: on one machine they share the cores, and the reader needs both.
struct ServerProcess {
  std::string name;  // e.g. "gateway-1"; the pid when not named
  int64_t pid = 0;
  bool qim = true;  // summed into StepResult::server_cores
};

struct LoadOptions {
  std::string host = "127.0.0.1";
  std::vector<uint16_t> ports = {7400};  // gateways' client ports (at least one)
  std::string secret;                    // QIM_AUTH_SECRET of the gateway, to mint the pairs' tokens
  uint32_t pairs = 100;
  uint32_t body_bytes = 100;
  std::string config = "embedded";  // the row label
  unsigned io_threads = 1;
  // Optional: where to read server figures. Store and page counters are summed over every admin port's
  // /metrics (each process counts its own store operations); CPU is read from /proc/<pid>/stat.
  std::vector<uint16_t> admin_ports;
  // Of those, the ports of processes that are only gateways (the distributed deployment's gateway-N):
  // their store reads are the clients' SYNC reads, reported apart (StepResult::sync_reads_per_msg).
  std::vector<uint16_t> gateway_admin_ports;
  std::vector<ServerProcess> processes;
  // Optional: a shell command printing the engine's own counters as "<name> <value>" lines
  // (scripts/bench/engine-counters.sh); run before and after each step (after the drain), and each
  // counter's delta per message sent is reported beside the store's own counters.
  std::string engine_counters_command;
};

class LoadRun {
 public:
  // Connects and authenticates every pair. Transport/Unauthenticated naming the first failure.
  static Result<std::unique_ptr<LoadRun>> connect(const LoadOptions& options, uint64_t max_messages);
  ~LoadRun();

  // Sends at `rate` msg/s for `seconds`, then waits up to `drain_seconds` for the last deliveries.
  // `progress` is called about once a second with a one-line summary.
  StepResult run_step(double rate, double seconds, double drain_seconds,
                      const std::function<void(const std::string&)>& progress);

  struct Shared;

 private:
  explicit LoadRun(LoadOptions options) : options_(std::move(options)) {}
  LoadOptions options_;
  std::shared_ptr<client::Runtime> runtime_;
  std::shared_ptr<Shared> shared_;
  std::vector<std::unique_ptr<client::Client>> senders_, receivers_;
  std::vector<std::string> receiver_ids_;
  uint64_t next_index_ = 0;
};

}  // namespace qim::load
