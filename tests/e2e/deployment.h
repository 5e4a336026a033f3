#pragma once
// What the e2e scenarios run against: a deployment of QIM, either one `qim up` (QIM_E2E_DEPLOYMENT=single,
// the default) or the distributed deployment (QIM_E2E_DEPLOYMENT=distributed): 2 `qim gateway`, `qim
// fanout`, 2 `qim mailbox` and `qim archiver`, each its own process, on Kafka (QIM_KAFKA_BROKERS) and a
// shared store (QIM_E2E_BACKEND=redis|scylla), with live connections routed through Redis
// (QIM_ROUTING_REDIS). Scenarios connect each user to one of the gateways (users spread over both),
// restart "the node" or "the whole system" through this interface, and read metrics summed over every
// process of the deployment.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "e2e/qim_process.h"

namespace qim::e2e {

class Deployment {
 public:
  virtual ~Deployment() = default;

  // Starts every process with the base variables plus `extra` and waits until each serves (nodes first,
  // gateways last). Transport or Timeout with the log tail of the process that did not come up.
  virtual Status start(const Env& extra = {}) = 0;
  // SIGTERM to every process (gateways first), waiting for each drain. 0 if every one exited 0, else the
  // first other exit code.
  virtual int stop(std::chrono::seconds timeout = std::chrono::seconds(60)) = 0;
  // SIGKILL to every process: a crash of the whole deployment.
  virtual void kill() = 0;
  // The MailboxNodes alone: SIGKILL them / start them again (the whole process for `qim up`).
  virtual void kill_nodes() = 0;
  virtual Status start_nodes(const Env& extra = {}) = 0;
  // One process of the deployment by name ("gateway-1", "mailbox-2", ...; `qim up`: "qim"): SIGKILL it /
  // start it again with `extra` and wait until it serves / its admin port. InvalidArgument for an unknown
  // name.
  virtual Status kill_process(const std::string& name) = 0;
  virtual Status start_process(const std::string& name, const Env& extra = {}) = 0;
  virtual Result<uint16_t> admin_port_of(const std::string& name) const = 0;
  // Sends a signal to one process (SIGSTOP / SIGCONT: a pause). InvalidArgument for an unknown name,
  // Invariant if it does not run.
  virtual Status signal_process(const std::string& name, int sig) = 0;
  // Variables one process gets at every later start (on top of the deployment's and the start's `extra`):
  // e.g. LD_PRELOAD of libfaketime for one MailboxNode. InvalidArgument for an unknown name.
  virtual Status set_process_env(const std::string& name, const Env& env) = 0;
  // Waits up to `timeout` for one process to end by itself: its exit code (QimProcess::wait_for_exit),
  // or an InvalidArgument for an unknown name.
  virtual Result<int> wait_process_exit(const std::string& name, std::chrono::seconds timeout) = 0;
  // Starts, with `extra`, the process that must refuse to start (`qim up`; distributed: a `qim mailbox`
  // owning every shard) and returns its exit code, -1 if it was still running after `timeout`.
  virtual int run_expecting_exit(const Env& extra, std::chrono::seconds timeout) = 0;

  virtual bool running() const = 0;
  // Client ports of the gateways, at least one.
  virtual std::vector<uint16_t> gateway_ports() const = 0;
  // Admin ports of every process (metrics are summed over them).
  virtual std::vector<uint16_t> admin_ports() const = 0;
  // The admin port of the process that runs fanout (POST /admin/fanout/replay).
  virtual uint16_t fanout_admin_port() const = 0;
  // The deployment's shard count: what the running processes resolved (an embedded `qim up` keeps what its
  // data directory was created with, a new one gets one per CPU: decision 51); 0 before the first start.
  virtual uint32_t shard_count() const = 0;
  // The data directory operator commands (`qim token`, `qim replay-fanout`) are pointed at.
  virtual const std::string& data_dir() const = 0;
  // The variables operator commands need to find this deployment's logs and store.
  virtual Env& operator_env() = 0;
  // The end of every process's log, each under its name.
  virtual std::string log_tail(size_t bytes = 4000) const = 0;
  // Whether the data directories stay after the deployment is gone (asked at destruction).
  virtual void keep_data_if(std::function<bool()> keep) = 0;

  // The first gateway (for connections of no particular user).
  uint16_t port() const { return gateway_ports().front(); }
  // The gateway a user's connections go to: users are spread over the gateways by a hash of their id.
  uint16_t port_for(const std::string& user) const;
};

// "single" (default) or "distributed": QIM_E2E_DEPLOYMENT.
std::string deployment_under_test();

// A `qim up` in `dir`.
std::unique_ptr<Deployment> single_deployment(std::string binary, std::string dir, Env env);
// The distributed deployment in `root` (one data directory per process under it). `env` holds what every
// process shares (secret, log and store variables, namespaces); `id` prefixes the gateway and node ids
// (QIM_GATEWAY_ID, QIM_NODE_ID), unique per deployment since deployments share the routing Redis.
// Ownership is static by default: each of the 2 nodes owns half of the `shards` shards (QIM_OWNED_SHARDS),
// so a restart keeps each shard's owner; with `leases` the nodes take their shards through leases
// (QIM_OWNED_SHARDS unset) and take over a dead node's.
enum class Ownership { kStatic, kLeases };
std::unique_ptr<Deployment> distributed_deployment(std::string binary, std::string root, Env env,
                                                   const std::string& id, uint32_t shards = 16,
                                                   Ownership ownership = Ownership::kStatic);

}  // namespace qim::e2e
