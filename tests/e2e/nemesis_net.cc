#include "e2e/nemesis_net.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "e2e/e2e_env.h"
#include "e2e/fault_support.h"

namespace qim::e2e {
namespace {

// Runs `command` through the shell with `input` on its stdin; its exit status and output (stdout and
// stderr).
std::pair<int, std::string> run(const std::string& command, const std::string& input = "") {
  const std::string in_file = make_temp_dir("nemesis-net") + "/input";
  {
    FILE* f = std::fopen(in_file.c_str(), "w");
    if (f == nullptr) return {-1, "cannot write " + in_file};
    std::fputs(input.c_str(), f);
    std::fclose(f);
  }
  FILE* p = ::popen((command + " <" + in_file + " 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, "popen failed"};
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  std::remove(in_file.c_str());
  std::remove(in_file.substr(0, in_file.rfind('/')).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

Result<Endpoint> endpoint(const std::string& variable, const std::string& value) {
  const auto colon = value.rfind(':');
  const int port = colon == std::string::npos ? 0 : std::atoi(value.c_str() + colon + 1);
  if (colon == std::string::npos || colon == 0 || port <= 0 || port > 65535)
    return Error(Errc::kInvalidArgument, variable + "=" + value + ": not host:port");
  std::string host = value.substr(0, colon);
  if (host == "localhost") host = "127.0.0.1";
  if (host.rfind("127.", 0) != 0)
    return Error(Errc::kInvalidArgument,
                 variable + "=" + value + ": the nemesis cuts loopback links only (127.0.0.0/8)");
  return Endpoint{host, static_cast<uint16_t>(port)};
}

Result<std::vector<Endpoint>> endpoints(const char* variable) {
  const char* v = std::getenv(variable);
  if (v == nullptr || *v == '\0') return Error(Errc::kInvalidArgument, std::string(variable) + " is not set");
  std::vector<Endpoint> out;
  std::stringstream list(v);
  for (std::string one; std::getline(list, one, ',');) {
    QIM_ASSIGN_OR_RETURN(Endpoint e, endpoint(variable, one));
    out.push_back(e);
  }
  return out;
}

// nft's matches of a link's packets in one direction.
std::string to_engine(const std::string& from, const Endpoint& to) {
  return "oifname \"lo\" ip saddr " + from + " ip daddr " + to.host + " tcp dport " + std::to_string(to.port);
}
std::string from_engine(const std::string& from, const Endpoint& to) {
  return "oifname \"lo\" ip saddr " + to.host + " tcp sport " + std::to_string(to.port) + " ip daddr " + from;
}

}  // namespace

Result<Engines> Engines::from_env() {
  Engines e;
  QIM_ASSIGN_OR_RETURN(auto kafka, endpoints("QIM_KAFKA_BROKERS"));
  QIM_ASSIGN_OR_RETURN(auto routing, endpoints("QIM_ROUTING_REDIS"));
  if (backend_under_test() == "redis") {
    QIM_ASSIGN_OR_RETURN(e.mailbox, endpoints("QIM_MAILBOX_REDIS"));
  } else {
    // The CQL hosts (QIM_CQL_HOSTS, host names only) on the native protocol's port.
    const char* hosts = std::getenv("QIM_CQL_HOSTS");
    if (hosts == nullptr || *hosts == '\0')
      return Error(Errc::kInvalidArgument, "QIM_CQL_HOSTS is not set (the scylla store's hosts)");
    std::stringstream list(hosts);
    for (std::string host; std::getline(list, host, ',');) {
      QIM_ASSIGN_OR_RETURN(Endpoint one, endpoint("QIM_CQL_HOSTS", host + ":9042"));
      e.mailbox.push_back(one);
    }
  }
  e.kafka = kafka.front();
  e.routing = routing.front();
  return e;
}

std::string delay_file_for(const std::string& address) {
  return std::filesystem::temp_directory_path().string() + "/qim_nemesis_" + std::to_string(::getpid()) +
         "_" + address + ".delay";
}

Result<std::map<std::string, std::string>> give_addresses(Deployment& qim) {
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < kDistributedProcesses.size(); ++i) {
    const std::string& name = kDistributedProcesses[i];
    // Six addresses per test process, picked by its pid among 40 blocks (127.0.4.10 .. 127.0.4.249): two
    // nemesis tests on one machine with the same engines must not cut each other's processes.
    const std::string address = "127.0.4." + std::to_string(10 + 6 * (::getpid() % 40) + i);
    QIM_RETURN_IF_ERROR(qim.set_process_env(name, {{"LD_PRELOAD", QIM_NEMESIS_PRELOAD},
                                                   {"QIM_NEMESIS_SOURCE_ADDRESS", address},
                                                   {"QIM_NEMESIS_DELAY_FILE", delay_file_for(address)}}));
    out[name] = address;
  }
  return out;
}

Result<std::unique_ptr<NetNemesis>> NetNemesis::open() {
  const std::string table = "qim_nemesis_" + std::to_string(::getpid());
  std::unique_ptr<NetNemesis> n(new NetNemesis(table));
  // Priority -10: before any filter chain of another table at the default 0 (they still see what passes).
  QIM_RETURN_IF_ERROR(n->nft("add table inet " + table + "\nadd chain inet " + table +
                             " output { type filter hook output priority -10; policy accept; }\n"));
  return n;
}

NetNemesis::~NetNemesis() {
  (void)heal();
  (void)run("nft delete table inet " + table_);
}

Status NetNemesis::nft(const std::string& script) {
  auto [rc, out] = run("nft -f -", script);
  if (rc != 0)
    return Error(Errc::kConfig, "nft could not install the nemesis rules (exit " + std::to_string(rc) +
                                    "; nftables and CAP_NET_ADMIN are needed: scripts/install-deps.sh): " +
                                    out + "\nthe rules were:\n" + script);
  return {};
}

Status NetNemesis::cut(const std::string& from, const Endpoint& to, Direction d) {
  std::string s;
  const std::string add = "add rule inet " + table_ + " output ";
  if (d != Direction::kFromEngine) s += add + to_engine(from, to) + " counter drop\n";
  if (d != Direction::kToEngine) s += add + from_engine(from, to) + " counter drop\n";
  return nft(s);
}

Status NetNemesis::lossy(const std::string& from, const Endpoint& to, int percent) {
  const std::string add = "add rule inet " + table_ + " output ";
  const std::string chance = " numgen random mod 100 < " + std::to_string(percent) + " counter drop\n";
  return nft(add + to_engine(from, to) + chance + add + from_engine(from, to) + chance);
}

Status NetNemesis::delay(const std::string& from, const Endpoint& to, int ms, int jitter_ms) {
  const std::string file = delay_file_for(from);
  std::ofstream out(file, std::ios::app);
  out << to.host << " " << to.port << " " << ms << " " << jitter_ms << "\n";
  if (!out.flush()) return Error(Errc::kConfig, "cannot write the delay file " + file);
  delay_files_.insert(file);
  return {};
}

uint64_t NetNemesis::counted() {
  auto [rc, out] = run("nft list table inet " + table_);
  if (rc != 0) return 0;
  uint64_t n = 0;
  static const std::regex packets("counter packets ([0-9]+)");
  for (std::sregex_iterator it(out.begin(), out.end(), packets), end; it != end; ++it)
    n += std::stoull((*it)[1].str());
  return n;
}

uint64_t NetNemesis::dropped() {
  return dropped_before_heal_ + counted();
}

Status NetNemesis::heal() {
  dropped_before_heal_ += counted();
  for (const auto& f : delay_files_) std::remove(f.c_str());
  delay_files_.clear();
  return nft("flush chain inet " + table_ + " output\n");
}

}  // namespace qim::e2e
