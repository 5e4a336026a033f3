#include "bench/load/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace qim::load {

namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string opt(const std::optional<double>& v, int digits) {
  return v ? fixed(*v, digits) : "-";
}

// "name<eq>cores<sep>name<eq>cores..." of a step's processes.
std::string process_list(const StepResult& s, const char* eq, const char* sep, int digits) {
  std::string out;
  for (const auto& [name, cores] : s.process_cores) {
    if (!out.empty()) out += sep;
    out += name + eq + fixed(cores, digits);
  }
  return out;
}

}  // namespace

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
      "mean_page,errors,disconnects,slo,process_cores,history_inserts_per_msg\n";
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
           o(s.history_inserts_per_msg) + "\n";
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

}  // namespace qim::load
