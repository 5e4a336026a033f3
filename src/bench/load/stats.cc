#include "bench/load/stats.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

#include "bench/load/number_format.h"

namespace qim::load {

namespace {

// "name<eq>cores<sep>name<eq>cores..." of a step's processes.
std::string process_list(const StepResult& s, const char* eq, const char* sep, int digits) {
  std::string out;
  for (const auto& [name, cores] : s.process_cores) {
    if (!out.empty()) out += sep;
    out += name + eq + fixed(cores, digits);
  }
  return out;
}

std::string engine_list(const StepResult& s, const char* eq, const char* sep, int digits) {
  if (!s.engine_error.empty()) {
    std::string e = s.engine_error;
    std::replace(e.begin(), e.end(), ',', ';');  // one CSV column
    return "error: " + e;
  }
  std::string out;
  for (const auto& [name, v] : s.engine_per_msg) {
    if (!out.empty()) out += sep;
    out += name + eq + fixed(v, digits);
  }
  return out;
}

}  // namespace

Result<std::vector<std::pair<std::string, double>>> parse_counters(std::string_view text) {
  std::vector<std::pair<std::string, double>> out;
  std::set<std::string, std::less<>> seen;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.remove_suffix(1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty() || line.front() == '#') continue;
    const size_t sp = line.find_first_of(" \t");
    auto bad = [&](const std::string& why) {
      return Error(Errc::kCorruptEntry, "engine counters, line " + std::to_string(line_no) + " '" +
                                            std::string(line) + "': " + why);
    };
    if (sp == std::string_view::npos) return bad("expected '<name> <value>'");
    const std::string_view name = line.substr(0, sp);
    std::string_view value = line.substr(sp + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    double v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(v))
      return bad("the value is not a number");
    if (!seen.emplace(name).second) return bad("the name appears twice");
    out.emplace_back(std::string(name), v);
  }
  return out;
}

Result<std::vector<std::pair<std::string, double>>> per_message(
    const std::vector<std::pair<std::string, double>>& before,
    const std::vector<std::pair<std::string, double>>& after, uint64_t messages) {
  if (messages == 0) return Error(Errc::kCorruptEntry, "engine counters: no messages in the step");
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [name, v] : after) {
    double b = 0;
    for (const auto& [n, w] : before)
      if (n == name) b = w;
    if (v < b)
      return Error(Errc::kCorruptEntry, "engine counter " + name + " went down (" + fixed(b, 0) + " -> " +
                                            fixed(v, 0) + "): did the engine restart?");
    out.emplace_back(name, (v - b) / static_cast<double>(messages));
  }
  return out;
}

double percentile(std::vector<double>& samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(samples.size())));
  rank = std::clamp<size_t>(rank, 1, samples.size());
  return samples[rank - 1];
}

std::string markdown_table(const std::vector<StepResult>& steps) {
  std::string out =
      "| config | offered msg/s | delivered msg/s | sent | delivered | delivered % | SEND_ACK P50 | SEND_ACK "
      "P99 "
      "| e2e P50 | e2e P99 | qim CPU (cores) | store ins/upd/read/LWT per msg | history ins per msg | mean "
      "page "
      "| errors | SLO |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& s : steps) {
    std::string ops = s.inserts_per_msg ? opt(s.inserts_per_msg, 2) + " / " + opt(s.updates_per_msg, 2) +
                                              " / " + opt(s.reads_per_msg, 2) + " / " + opt(s.lwts_per_msg, 2)
                                        : "-";
    out += "| " + s.config + " | " + fixed(s.offered_rate, 0) + " | " + fixed(s.delivered_rate(), 0) + " | " +
           std::to_string(s.sent) + " | " + std::to_string(s.delivered) + " | " +
           fixed(s.delivered_pct(), 2) + "% | " + fixed(s.ack_p50_ms, 1) + " ms | " + fixed(s.ack_p99_ms, 1) +
           " ms | " + fixed(s.e2e_p50_ms, 1) + " ms | " + fixed(s.e2e_p99_ms, 1) + " ms | " +
           opt(s.server_cores, 2) + " | " + ops + " | " + opt(s.history_inserts_per_msg, 2) + " | " +
           opt(s.mean_page, 2) + " | " + std::to_string(s.errors + s.disconnects) + " | " +
           (s.slo_pass() ? "pass" : "FAIL") + " |\n";
  }
  return out;
}

std::string csv(const std::vector<StepResult>& steps) {
  std::string out =
      "config,offered_rate,delivered_rate,seconds,sent,acked,delivered,delivered_pct,ack_p50_ms,ack_p99_ms,"
      "e2e_p50_ms,e2e_p99_ms,e2e_max_ms,server_cores,inserts_per_msg,updates_per_msg,reads_per_msg,lwts_per_"
      "msg,"
      "mean_page,errors,disconnects,slo,process_cores,history_inserts_per_msg,syncs_per_msg,sync_reads_per_"
      "msg,engine_per_msg\n";
  auto o = [](const std::optional<double>& v) { return v ? fixed(*v, 3) : std::string(); };
  for (const auto& s : steps) {
    out += s.config + "," + fixed(s.offered_rate, 0) + "," + fixed(s.delivered_rate(), 1) + "," +
           fixed(s.seconds, 1) + "," + std::to_string(s.sent) + "," + std::to_string(s.acked) + "," +
           std::to_string(s.delivered) + "," + fixed(s.delivered_pct(), 3) + "," + fixed(s.ack_p50_ms, 3) +
           "," + fixed(s.ack_p99_ms, 3) + "," + fixed(s.e2e_p50_ms, 3) + "," + fixed(s.e2e_p99_ms, 3) + "," +
           fixed(s.e2e_max_ms, 3) + "," + o(s.server_cores) + "," + o(s.inserts_per_msg) + "," +
           o(s.updates_per_msg) + "," + o(s.reads_per_msg) + "," + o(s.lwts_per_msg) + "," + o(s.mean_page) +
           "," + std::to_string(s.errors) + "," + std::to_string(s.disconnects) + "," +
           (s.slo_pass() ? "pass" : "fail") + "," + process_list(s, "=", ";", 3) + "," +
           o(s.history_inserts_per_msg) + "," + fixed(s.syncs_per_msg, 4) + "," + o(s.sync_reads_per_msg) +
           "," + engine_list(s, "=", ";", 4) + "\n";
  }
  return out;
}

std::string process_cpu_table(const std::vector<StepResult>& steps) {
  bool any = false;
  for (const auto& s : steps) any = any || !s.process_cores.empty();
  if (!any) return "";
  std::string out = "| config | offered msg/s | CPU by process (cores) |\n|---|---|---|\n";
  for (const auto& s : steps) {
    out +=
        "| " + s.config + " | " + fixed(s.offered_rate, 0) + " | " + process_list(s, " ", ", ", 2) + " |\n";
  }
  return out;
}

std::string engine_ops_table(const std::vector<StepResult>& steps) {
  bool any = false;
  for (const auto& s : steps) any = any || !s.engine_per_msg.empty() || !s.engine_error.empty();
  if (!any) return "";
  std::string out = "| config | offered msg/s | counted at the engine, per message sent |\n|---|---|---|\n";
  for (const auto& s : steps)
    out += "| " + s.config + " | " + fixed(s.offered_rate, 0) + " | " + engine_list(s, " ", ", ", 2) + " |\n";
  return out;
}

}  // namespace qim::load
