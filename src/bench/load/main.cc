// qim-load: drives one-to-one pairs over real WebSocket connections at fixed offered rates against a
// running gateway on loopback, and prints delivered %, SEND_ACK and end-to-end latencies per step (a
// progress line each second, a Markdown table and a CSV at the end). With --group-members it runs the group
// mode instead (group_run.h: SEND to the first and last member's DELIVER per group size; exit status 3
// when a delivery is missing); with --presence-contacts the presence mode (presence_run.h: a subject's
// online and offline changes to the last of its contacts; exit status 3 when one was not seen). Bounded:
// rates, durations and connection counts are capped, and only loopback addresses are accepted.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <boost/asio/ip/address.hpp>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <tuple>

#include "bench/load/group_run.h"
#include "bench/load/load_run.h"
#include "bench/load/presence_run.h"

namespace {

constexpr double kMaxRate = 50'000;
constexpr double kMaxSeconds = 600;
constexpr uint64_t kMaxMessagesPerRun = 10'000'000;

// The integer after "key": in running.json, or -1.
int64_t json_int(const std::string& text, const std::string& key) {
  auto at = text.find("\"" + key + "\"");
  if (at == std::string::npos) return -1;
  at = text.find(':', at);
  return at == std::string::npos ? -1 : std::strtoll(text.c_str() + at + 1, nullptr, 10);
}

// "1234" or "gateway-1=1234"; nullopt for anything else.
std::optional<qim::load::ServerProcess> parse_process(const std::string& text) {
  const auto eq = text.find('=');
  const std::string name = eq == std::string::npos ? text : text.substr(0, eq);
  const std::string digits = eq == std::string::npos ? text : text.substr(eq + 1);
  int64_t pid = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (ec != std::errc() || end != digits.data() + digits.size() || pid <= 0 || name.empty())
    return std::nullopt;
  return qim::load::ServerProcess{name, pid};
}

// An unsigned from the environment, or `fallback`.
uint32_t env_uint(const char* name, uint32_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? static_cast<uint32_t>(std::strtoul(v, nullptr, 10)) : fallback;
}

// The group mode: one group per size, one after another; the tables at the end.
int run_groups(qim::load::GroupOptions g, const std::vector<uint32_t>& sizes, const std::string& csv_path,
               const std::string& md_path) {
  std::vector<qim::load::GroupResult> results;
  auto progress = [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  for (uint32_t members : sizes) {
    char sending[64] = "one at a time";
    if (g.rate > 0) std::snprintf(sending, sizeof sending, "at %g msg/s", g.rate);
    std::printf("group of %u members: %u messages %s, up to %u listeners\n", members, g.messages, sending,
                g.listeners);
    std::fflush(stdout);
    auto r = qim::load::run_group(g, members, progress);
    if (!r.ok()) {
      std::fprintf(stderr, "qim-load: group of %u members: %s\n", members, r.error().to_string().c_str());
      return 1;
    }
    if (!r->first_error.empty()) progress("  first error: " + r->first_error);
    results.push_back(*std::move(r));
  }
  const std::string table = qim::load::group_markdown(results);
  const std::string csv = qim::load::group_csv(results);
  std::printf("\n%s\n%s", table.c_str(), csv.c_str());
  if (!csv_path.empty()) std::ofstream(csv_path) << csv;
  if (!md_path.empty()) std::ofstream(md_path) << table;
  bool complete = true;
  for (const auto& r : results) complete = complete && r.complete();
  return complete ? 0 : 3;
}

// The presence mode: one set of contacts per count, one after another; the table at the end.
int run_presences(const qim::load::PresenceOptions& p, const std::vector<uint32_t>& counts,
                  const std::string& csv_path, const std::string& md_path) {
  std::vector<qim::load::PresenceResult> results;
  for (uint32_t contacts : counts) {
    std::printf("presence with %u contacts: %u online/offline changes\n", contacts, p.changes);
    std::fflush(stdout);
    auto r = qim::load::run_presence(p, contacts, [](const std::string& line) {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    });
    if (!r.ok()) {
      std::fprintf(stderr, "qim-load: presence with %u contacts: %s\n", contacts,
                   r.error().to_string().c_str());
      return 1;
    }
    results.push_back(std::move(*r));
  }
  const std::string table = qim::load::presence_markdown(results);
  const std::string csv = qim::load::presence_csv(results);
  std::printf("\n%s\n%s", table.c_str(), csv.c_str());
  if (!csv_path.empty()) std::ofstream(csv_path) << csv;
  if (!md_path.empty()) std::ofstream(md_path) << table;
  bool complete = true;
  for (const auto& r : results) complete = complete && r.missing == 0;
  return complete ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"qim-load: one-to-one pairs over WebSocket at a fixed offered rate (loopback only)"};
  qim::load::LoadOptions o;
  std::vector<double> rates{200};
  double seconds = 10, drain = 10;
  std::string csv_path, md_path;
  o.secret = std::getenv("QIM_AUTH_SECRET") ? std::getenv("QIM_AUTH_SECRET") : "";
  std::vector<uint16_t> ports, admin_ports;
  std::vector<std::string> pids, data_dirs;
  app.add_option("--host", o.host, "gateway address (loopback only)")->capture_default_str();
  app.add_option("--port", ports,
                 "gateway client port; repeat for several gateways (pairs then cross them; default 7400)")
      ->check(CLI::Range(1, 65535));
  app.add_option(
         "--admin-port", admin_ports,
         "admin port whose /metrics counts store operations and pages; repeat to sum several processes")
      ->check(CLI::Range(1, 65535));
  app.add_option("--server-pid", pids, "a server process for the CPU figures: PID or NAME=PID; repeatable");
  std::vector<std::string> engine_pids;
  app.add_option(
      "--engine-pid", engine_pids,
      "an engine process (Kafka, the store, Redis) whose CPU is shown beside the qim processes' but "
      "not summed into qim CPU: PID or NAME=PID; repeatable");
  app.add_option("--data-dir", data_dirs,
                 "a running instance's data directory: gateway port, admin port and pid from running.json, "
                 "secret from auth-secret; repeatable (one per process of a distributed deployment)");
  app.add_option("--secret", o.secret, "QIM_AUTH_SECRET of the gateway (default: the variable)");
  app.add_option("--pairs", o.pairs, "sender/receiver pairs (2 connections each)")
      ->capture_default_str()
      ->check(CLI::Range(1, 2000));
  app.add_option("--rate", rates, "offered rate(s) in msg/s; several values make a ladder")
      ->capture_default_str()
      ->check(CLI::Range(1.0, kMaxRate));
  app.add_option("--duration", seconds, "seconds per step")
      ->capture_default_str()
      ->check(CLI::Range(1.0, kMaxSeconds));
  app.add_option("--drain", drain, "seconds to wait for late deliveries after each step")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 120.0));
  app.add_option("--body-bytes", o.body_bytes, "message body size")
      ->capture_default_str()
      ->check(CLI::Range(1, 16384));
  app.add_option("--config", o.config, "configuration name for the table")->capture_default_str();
  app.add_option("--io-threads", o.io_threads, "client I/O threads")
      ->capture_default_str()
      ->check(CLI::Range(1, 8));
  app.add_option("--engine-counters", o.engine_counters_command,
                 "a shell command printing the engine's counters as '<name> <value>' lines, run before and "
                 "after each step (scripts/bench/engine-counters.sh); deltas are reported per message");
  // The group mode (group_run.h): given --group-members, it runs instead of the pairs.
  std::vector<uint32_t> group_sizes;
  qim::load::GroupOptions g;
  g.shards = env_uint("QIM_SHARDS", g.shards);
  g.chunk_entries = env_uint("QIM_FANOUT_CHUNK_ENTRIES", g.chunk_entries);
  app.add_option(
         "--group-members", group_sizes,
         "group mode: the group sizes to measure, one group each (owner included), e.g. 100,1000,10000")
      ->delimiter(',')
      ->check(CLI::Range(2, 1'000'000));
  app.add_option("--group-messages", g.messages, "group mode: messages sent to each group")
      ->capture_default_str()
      ->check(CLI::Range(1, 10'000));
  app.add_option("--group-listeners", g.listeners,
                 "group mode: members connected at most (a sample holding every shard's last-written member)")
      ->capture_default_str()
      ->check(CLI::Range(1, 20'000));
  app.add_option("--group-rate", g.rate,
                 "group mode: msg/s; 0 sends one at a time (after every listener had the previous)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1000.0));
  app.add_option(
      "--group-verify", g.verify,
      "group mode: members not listening whose mailbox is read afterwards through a fresh connection "
      "(default: all)");
  app.add_option(
         "--shards", g.shards,
         "group mode: the deployment's QIM_SHARDS (default: the variable, else running.json's, else 16)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--chunk-entries", g.chunk_entries,
                 "group mode: the deployment's QIM_FANOUT_CHUNK_ENTRIES (default: the variable, else 256)")
      ->check(CLI::Range(1, 1024));
  // The presence mode (presence_run.h): given --presence-contacts, it runs instead of the pairs.
  std::vector<uint32_t> presence_counts;
  qim::load::PresenceOptions p;
  app.add_option("--presence-contacts", presence_counts,
                 "presence mode: contact counts to measure, one fresh subject each, e.g. 100,1000")
      ->delimiter(',')
      ->check(CLI::Range(1, 10000));
  app.add_option("--presence-changes", p.changes, "presence mode: online/offline cycles of the subject")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option(
         "--presence-grace", p.grace_seconds,
         "presence mode: the deployment's QIM_PRESENCE_GRACE_MS in seconds (an offline waits that longer)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 600.0));
  app.add_option("--csv", csv_path, "also write the results as CSV here");
  app.add_option("--markdown", md_path, "also write the Markdown table here");
  CLI11_PARSE(app, argc, argv);

  for (const auto& dir : data_dirs) {
    std::ifstream in(dir + "/running.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const int64_t pid = json_int(text, "pid");
    if (pid <= 0) {
      std::fprintf(stderr, "qim-load: no running instance in %s (running.json missing)\n", dir.c_str());
      return 2;
    }
    if (int64_t p = json_int(text, "gateway_port"); p > 0) ports.push_back(static_cast<uint16_t>(p));
    // The deployment's shard count, unless --shards or QIM_SHARDS says it: an embedded data directory's
    // count is whatever it was created with (decision 51).
    if (int64_t n = json_int(text, "shards");
        n > 0 && app.count("--shards") == 0 && !std::getenv("QIM_SHARDS"))
      g.shards = static_cast<uint32_t>(n);
    const int64_t admin = json_int(text, "admin_port");
    if (admin > 0) admin_ports.push_back(static_cast<uint16_t>(admin));
    auto path = std::filesystem::path(dir).lexically_normal();
    if (path.filename().empty()) path = path.parent_path();  // "run/gateway-1/" names gateway-1 too
    // scripts/distributed.sh names its gateway-only processes gateway-N: their reads are SYNC reads.
    if (admin > 0 && path.filename().string().rfind("gateway-", 0) == 0)
      o.gateway_admin_ports.push_back(static_cast<uint16_t>(admin));
    o.processes.push_back({path.filename().string(), pid});
    if (o.secret.empty()) {
      std::ifstream s(dir + "/auth-secret");
      std::getline(s, o.secret);
    }
  }
  // --server-pid (qim processes) and --engine-pid (shown, not summed into qim CPU).
  for (const auto& [flag, list, qim] :
       {std::tuple{"--server-pid", &pids, true}, std::tuple{"--engine-pid", &engine_pids, false}}) {
    for (const auto& text : *list) {
      auto process = parse_process(text);
      if (!process) {
        std::fprintf(stderr, "qim-load: %s %s: expected PID or NAME=PID with PID > 0\n", flag, text.c_str());
        return 2;
      }
      process->qim = qim;
      o.processes.push_back(*process);
    }
  }
  // The load generator shares the machine too: its own CPU is shown last (not summed).
  if (!o.processes.empty()) o.processes.push_back({"qim-load", static_cast<int64_t>(getpid()), false});
  if (!ports.empty()) o.ports = ports;
  o.admin_ports = admin_ports;
  boost::system::error_code ec;
  auto ip = boost::asio::ip::make_address(o.host, ec);
  if (ec || !ip.is_loopback()) {
    std::fprintf(stderr, "qim-load: --host %s is not a loopback address; load is only sent to this machine\n",
                 o.host.c_str());
    return 2;
  }
  if (o.secret.empty()) {
    std::fprintf(stderr, "qim-load: no token secret: set QIM_AUTH_SECRET, --secret or --data-dir\n");
    return 2;
  }
  if (!presence_counts.empty()) {
    p.host = o.host, p.ports = o.ports, p.secret = o.secret, p.config = o.config;
    p.io_threads = o.io_threads, p.drain_seconds = drain, p.admin_ports = o.admin_ports;
    return run_presences(p, presence_counts, csv_path, md_path);
  }
  if (!group_sizes.empty()) {
    g.host = o.host, g.ports = o.ports, g.secret = o.secret, g.config = o.config;
    g.admin_ports = o.admin_ports, g.body_bytes = o.body_bytes, g.io_threads = o.io_threads;
    g.drain_seconds = drain;
    return run_groups(g, group_sizes, csv_path, md_path);
  }
  uint64_t total = 0;
  for (double r : rates) total += static_cast<uint64_t>(r * seconds) + 1;
  if (total > kMaxMessagesPerRun) {
    std::fprintf(stderr, "qim-load: %llu messages planned, over the cap of %llu\n",
                 static_cast<unsigned long long>(total), static_cast<unsigned long long>(kMaxMessagesPerRun));
    return 2;
  }

  std::printf("qim-load: %u pairs on %s port", o.pairs, o.host.c_str());
  for (uint16_t p : o.ports) std::printf(" %u", p);
  std::printf(", steps");
  for (double r : rates) std::printf(" %.0f", r);
  std::printf(" msg/s, %.0f s each\n", seconds);
  std::fflush(stdout);
  auto run = qim::load::LoadRun::connect(o, total);
  if (!run.ok()) {
    std::fprintf(stderr, "qim-load: %s\n", run.error().to_string().c_str());
    return 1;
  }
  std::vector<qim::load::StepResult> steps;
  for (double rate : rates) {
    std::printf("step %.0f msg/s\n", rate);
    steps.push_back((*run)->run_step(rate, seconds, drain, [](const std::string& line) {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    }));
  }
  run->reset();
  const std::string table = qim::load::markdown_table(steps);
  const std::string csv = qim::load::csv(steps);
  const std::string cpu = qim::load::process_cpu_table(steps);
  const std::string engine = qim::load::engine_ops_table(steps);
  std::printf("\n%s\n", table.c_str());
  if (!cpu.empty()) std::printf("%s\n", cpu.c_str());
  if (!engine.empty()) std::printf("%s\n", engine.c_str());
  std::printf("%s", csv.c_str());
  if (!csv_path.empty()) std::ofstream(csv_path) << csv;
  if (!md_path.empty())
    std::ofstream(md_path) << table << (cpu.empty() ? "" : "\n" + cpu)
                           << (engine.empty() ? "" : "\n" + engine);
  return 0;
}
