// qim-cql: runs CQL statements against a cluster and prints the rows (tab-separated, header first).
//
//   qim-cql [--hosts H[,H...]] [--dc DC] [--timeout-ms N] [--consistency LEVEL] [--page-size N]
//           [--connect-wait-s N] [--no-header] CQL [CQL...]
//
// Hosts default to $QIM_CQL_HOSTS, then 127.0.0.1. Statements run in order, unprepared; the first
// failure stops the run. Exit status: 0 success, 1 a CQL/connection error (printed on stderr as
// "qim-cql: CODE: message"), 2 bad usage. Used by the engines' smoke tests, e.g.
//   qim-cql --hosts 127.0.0.1 "SELECT release_version FROM system.local"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cql_session.h"

namespace {

constexpr std::string_view kUsage =
    "usage: qim-cql [--hosts H[,H...]] [--dc DC] [--timeout-ms N] [--consistency LEVEL]\n"
    "               [--page-size N] [--connect-wait-s N] [--no-header] CQL [CQL...]\n"
    "  --hosts           contact points, host[:port] (default $QIM_CQL_HOSTS or 127.0.0.1)\n"
    "  --dc              local datacenter (default: any)\n"
    "  --timeout-ms      request timeout (default 10000)\n"
    "  --consistency     ONE, QUORUM, LOCAL_QUORUM, ALL, SERIAL, ... (default LOCAL_QUORUM)\n"
    "  --page-size       fetch results in pages of N rows (default: unpaged)\n"
    "  --connect-wait-s  keep retrying the connection for up to N seconds (default 0)\n"
    "  --no-header       do not print the column names\n";

int usage(std::string_view problem) {
  if (!problem.empty())
    std::fprintf(stderr, "qim-cql: %.*s\n", static_cast<int>(problem.size()), problem.data());
  std::fprintf(stderr, "%.*s", static_cast<int>(kUsage.size()), kUsage.data());
  return 2;
}

bool parse_number(std::string_view s, long long min, long long max, long long& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  const std::string str(s);
  const long long v = std::strtoll(str.c_str(), &end, 10);
  if (end == nullptr || *end != '\0' || v < min || v > max) return false;
  out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace qim::cql;
  SessionOptions options;
  options.request_timeout_ms = 10000;
  ExecOptions exec;
  long long connect_wait_s = 0;
  bool header = true;
  std::vector<std::string> statements;
  const char* env_hosts = std::getenv("QIM_CQL_HOSTS");
  std::string hosts = env_hosts != nullptr && *env_hosts != '\0' ? env_hosts : "127.0.0.1";

  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto next = [&](std::string_view& value) {
      if (i + 1 >= argc) return false;
      value = argv[++i];
      return true;
    };
    std::string_view value;
    long long n = 0;
    if (arg == "-h" || arg == "--help") {
      usage("");
      return 0;
    } else if (arg == "--hosts") {
      if (!next(value)) return usage("--hosts needs a value");
      hosts = std::string(value);
    } else if (arg == "--dc") {
      if (!next(value)) return usage("--dc needs a value");
      options.local_dc = std::string(value);
    } else if (arg == "--timeout-ms") {
      if (!next(value) || !parse_number(value, 1, 3600000, n)) return usage("--timeout-ms needs 1..3600000");
      options.request_timeout_ms = static_cast<uint32_t>(n);
    } else if (arg == "--consistency") {
      if (!next(value)) return usage("--consistency needs a value");
      auto c = parse_consistency(value);
      if (!c) return usage("unknown consistency level " + std::string(value));
      exec.consistency = *c;
    } else if (arg == "--page-size") {
      if (!next(value) || !parse_number(value, 1, 1000000, n)) return usage("--page-size needs 1..1000000");
      exec.page_size = static_cast<int32_t>(n);
      exec.max_rows = -1;  // print every page
    } else if (arg == "--connect-wait-s") {
      if (!next(value) || !parse_number(value, 0, 86400, n)) return usage("--connect-wait-s needs 0..86400");
      connect_wait_s = n;
    } else if (arg == "--no-header") {
      header = false;
    } else if (arg.starts_with("--")) {
      return usage("unknown option " + std::string(arg));
    } else {
      statements.emplace_back(arg);
    }
  }
  if (statements.empty()) return usage("no CQL statement given");
  options.hosts = split_hosts(hosts);
  if (options.hosts.empty()) return usage("no hosts given");

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(connect_wait_s);
  Result<Session> session = Session::connect(options);
  while (!session && session.error().code == CqlErrc::kConnect &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    session = Session::connect(options);
  }
  if (!session) {
    std::fprintf(stderr, "qim-cql: %s\n", session.error().to_string().c_str());
    return 1;
  }

  for (const std::string& cql : statements) {
    Result<Rows> rows = session->query(cql, {}, exec);
    if (!rows) {
      std::fprintf(stderr, "qim-cql: %s\n", rows.error().to_string().c_str());
      return 1;
    }
    const size_t cols = rows->column_count();
    if (header && cols > 0) {
      std::string line;
      for (size_t c = 0; c < cols; ++c) {
        if (c > 0) line += '\t';
        line += rows->column_name(c);
      }
      std::printf("%s\n", line.c_str());
    }
    for (Row row : *rows) {
      std::string line;
      for (size_t c = 0; c < cols; ++c) {
        if (c > 0) line += '\t';
        line += row.render(c);
      }
      std::printf("%s\n", line.c_str());
    }
  }
  std::fflush(stdout);
  return 0;
}
