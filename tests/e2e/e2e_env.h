#pragma once
// The e2e suite's shared state: one deployment per test run (a gtest global environment), started in a
// fresh temporary data directory with free ports, and the helpers every scenario uses.
//
// QIM_E2E_BACKEND=embedded (default) | memory | redis | scylla picks the mailbox store of the processes
// under test; QIM_E2E_DEPLOYMENT=single (default: one `qim up`) | distributed (every role its own process
// on Kafka, e2e/deployment.h; needs QIM_KAFKA_BROKERS, QIM_ROUTING_REDIS and a redis or scylla store).
// Every other QIM_* variable of the test's environment reaches the processes unchanged (brokers, CQL
// hosts, Redis endpoints).

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/client.h"
#include "client/mailbox_feed.h"
#include "e2e/deployment.h"
#include "e2e/qim_process.h"

namespace qim::e2e {

using namespace std::chrono_literals;
using client::Client;
using client::Entry;
using client::ServerFrame;

inline constexpr const char* kSecret = "e2e-secret-0123456789abcdef";
inline constexpr auto kWait = 20s;      // upper bound for anything the pipeline does
inline constexpr auto kQuiet = 1500ms;  // how long we watch for something that must NOT arrive

// The backend under test and the process environment it needs.
std::string backend_under_test();
Env process_env_for_backend();

// A new deployment in a fresh directory, with logs and a store namespace of its own (scenarios that play
// with epochs or clocks use their own).
// `ownership` matters to the distributed deployment only.
std::unique_ptr<Deployment> new_deployment(const std::string& name, Ownership ownership = Ownership::kStatic);

// The deployment shared by the scenarios (shared_deployment.cc: the scenario binary only).
Deployment& shared_qim();

// A user id unique to this test run and scenario: "<scenario>_<name>_<run>".
std::string user(const std::string& scenario, const std::string& name);

std::string token_for(const std::string& user, const std::string& device);
// Connects to the first gateway.
std::unique_ptr<Client> connect_to(const Deployment& qim);
// Connects to the user's gateway (Deployment::port_for) and authenticates; fails the test (and returns
// null) on error.
std::unique_ptr<Client> login(const Deployment& qim, const std::string& user,
                              const std::string& device = "d1");
// The same on a given gateway's port (the fault tests pick the gateway).
std::unique_ptr<Client> login_at(uint16_t port, const std::string& user, const std::string& device = "d1");

// Every entry after `after`, following `more` to the end. nullopt (with a test failure) on an error.
std::optional<std::vector<Entry>> sync_all(Client& c, uint64_t after = 0);
// Polls SYNC until `pred` holds for the entries after `after`, or `within` (kWait) passes.
std::vector<Entry> sync_until(Client& c, const std::function<bool(const std::vector<Entry>&)>& pred,
                              uint64_t after = 0, std::chrono::milliseconds within = kWait);
// DELIVERed entries until `count` arrived or `timeout` passed.
std::vector<Entry> collect_delivered(Client& c, size_t count, std::chrono::milliseconds timeout);
// What the client loop of docs/protocol.md (a started MailboxFollower) shows, until `count` entries were
// shown or `timeout` passed; fails the test on an error other than a timeout.
std::vector<Entry> follow(client::MailboxFollower& f, size_t count, std::chrono::milliseconds timeout);

// Value of a Prometheus sample "name{labels} value" in /metrics, summed over the deployment's processes; 0
// if absent.
double metric(const Deployment& qim, const std::string& sample);
// The /metrics text of every process of the deployment, one after the other.
std::string metrics_text(const Deployment& qim);

}  // namespace qim::e2e
