#include "bench/load/ladder_report.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <set>

#include "bench/load/number_format.h"

namespace qim::load {

namespace {

std::string ms(double v) {
  return v >= 1000 ? fixed(v / 1000, 2) + " s" : fixed(v, 1) + " ms";
}
std::string ratio(std::optional<double> a, std::optional<double> b) {
  return a && b && *b > 0 ? fixed(*a / *b, 3) : "-";
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (size_t at = 0;;) {
    const size_t next = s.find(sep, at);
    out.push_back(s.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at));
    if (next == std::string_view::npos) return out;
    at = next + 1;
  }
}

// "name=value;name=value" (the process and engine columns); false if a pair does not parse.
bool parse_pairs(std::string_view s, std::map<std::string, double>& out) {
  if (s.empty()) return true;
  for (auto pair : split(s, ';')) {
    const size_t eq = pair.rfind('=');
    if (eq == std::string_view::npos || eq == 0) return false;
    double v = 0;
    auto [end, ec] = std::from_chars(pair.data() + eq + 1, pair.data() + pair.size(), v);
    if (ec != std::errc() || end != pair.data() + pair.size()) return false;
    out[std::string(pair.substr(0, eq))] = v;
  }
  return true;
}

const LadderRow* find(const std::vector<LadderRow>& rows, std::string_view config, double offered) {
  for (const auto& r : rows)
    if (r.config == config && r.offered == offered) return &r;
  return nullptr;
}

// The highest offered rate of `config` whose step passes `ok`; nullopt if none does (or no such config).
template <typename Ok>
std::optional<double> highest(const std::vector<LadderRow>& rows, std::string_view config, Ok ok) {
  std::optional<double> best;
  for (const auto& r : rows)
    if (r.config == config && ok(r) && (!best || r.offered > *best)) best = r.offered;
  return best;
}

bool all_delivered(const LadderRow& r) {
  return r.sent > 0 && r.delivered == r.sent;
}

std::optional<double> lwt_per_record(const LadderRow* r) {
  if (!r) return std::nullopt;
  if (auto it = r->engine.find("lwt"); it != r->engine.end()) return it->second;
  return r->lwts;
}

std::string engine_ops(const LadderRow& r) {
  if (!r.engine_error.empty()) return "error: " + r.engine_error;
  auto get = [&](const char* k) -> std::optional<double> {
    auto it = r.engine.find(k);
    return it == r.engine.end() ? std::nullopt : std::optional<double>(it->second);
  };
  if (get("writes")) {
    // The node's client requests, where counted: what batching lowers while the table counts stay.
    const std::string requests = get("requests") ? " (" + opt(get("requests"), 2) + " requests)" : "";
    return opt(get("writes"), 2) + " / " + opt(get("reads"), 2) + " / " + opt(get("lwt"), 2) + requests;
  }
  if (get("calls")) return opt(get("calls"), 2) + " commands";
  return "-";
}

// One line of the targets table: what was measured, the bound, and whether the run meets it.
struct Target {
  std::string what;
  std::optional<double> measured;
  int digits;
  bool at_least;  // the measure must be >= bound (else <=)
  double bound;
  std::string bound_text;
};

std::string target_row(const Target& t) {
  std::string verdict = "not measured";
  if (t.measured) {
    const bool met = t.at_least ? *t.measured >= t.bound : *t.measured <= t.bound;
    verdict = met ? "met" : "not met";
  }
  return "| " + t.what + " | " + opt(t.measured, t.digits) + " | " + t.bound_text + " | " + verdict + " |\n";
}

// The highest rate both configurations ran and delivered in full: where a ratio of their P99s compares
// two working pipelines rather than one queue against another.
std::optional<double> highest_common_delivered(const std::vector<LadderRow>& rows, std::string_view a,
                                               std::string_view b) {
  std::optional<double> best;
  for (const auto& r : rows) {
    if (r.config != a || !all_delivered(r)) continue;
    const LadderRow* other = find(rows, b, r.offered);
    if (other && all_delivered(*other) && (!best || r.offered > *best)) best = r.offered;
  }
  return best;
}

// Issue 10's performance targets, judged on this run alone.
std::string targets_markdown(const std::vector<LadderRow>& rows) {
  auto value = [&](std::string_view config, double rate, auto get) -> std::optional<double> {
    const LadderRow* r = find(rows, config, rate);
    return r ? get(*r) : std::nullopt;
  };
  auto within_slo = [](const LadderRow& r) { return r.slo; };
  std::optional<double> embedded_share;
  std::string share_what = "embedded: highest rate within the SLO ÷ the relay's";
  if (auto e = highest(rows, "embedded", within_slo), relay = highest(rows, "relay", within_slo);
      e && relay) {
    embedded_share = *e / *relay;
    // A relay within the SLO at its last step has a higher ceiling than the ladder shows: say so, since
    // the share is then an upper bound.
    const auto relay_top = highest(rows, "relay", [](const LadderRow&) { return true; });
    share_what += " (" + fixed(*e, 0) + " ÷ " + fixed(*relay, 0) +
                  (relay_top && *relay_top == *relay ? " msg/s, the relay's last step: capped)" : " msg/s)");
  }
  std::optional<double> p64_over_p1;
  std::string common = "no such step";
  if (auto rate = highest_common_delivered(rows, "scylla-p64", "scylla-p1")) {
    common = fixed(*rate, 0) + " msg/s";
    const LadderRow* p64 = find(rows, "scylla-p64", *rate);
    const LadderRow* p1 = find(rows, "scylla-p1", *rate);
    if (p1->e2e_p99 > 0) p64_over_p1 = p64->e2e_p99 / p1->e2e_p99;
  }
  std::optional<double> over_lwt;
  if (auto a = highest(rows, "scylla-p64", all_delivered), b = highest(rows, "scylla-lwt", all_delivered);
      a && b)
    over_lwt = *a / *b;
  const std::vector<Target> targets = {
      {share_what, embedded_share, 3, true, 1.0 / 3, ">= 0.333"},
      {"embedded: e2e P50 at 2,000 msg/s (ms)",
       value("embedded", 2000, [](const LadderRow& r) { return std::optional<double>(r.e2e_p50); }), 1, false,
       5, "<= 5"},
      {"embedded: QIM CPU per message at 8,000 msg/s (µs)",
       value("embedded", 8000, [](const LadderRow& r) { return r.qim_us_per_msg(); }), 0, false, 100,
       "<= 100"},
      {"scylla page 64: highest rate within the SLO (msg/s)", highest(rows, "scylla-p64", within_slo), 0,
       true, 2000, ">= 2000"},
      {"page 64 ÷ page 1 e2e P99 at the highest step both delivered in full (" + common + ")", p64_over_p1, 3,
       false, 0.15, "<= 0.15"},
      {"scylla page 64 ÷ scylla-lwt, highest rate at 100% delivered", over_lwt, 1, true, 50, ">= 50"},
  };
  std::string out =
      "\n**Issue 10's targets, this run alone** (a target whose steps did not run is not measured; the "
      "relay's highest rate is capped by its last step).\n\n"
      "| target | measured | bound | verdict |\n|---|---|---|---|\n";
  for (const auto& t : targets) out += target_row(t);
  return out;
}

}  // namespace

std::optional<double> LadderRow::store_engine_cores() const {
  for (const char* name : {"cassandra", "redis-store"})
    if (auto it = process_cores.find(name); it != process_cores.end()) return it->second;
  return std::nullopt;
}

std::optional<double> LadderRow::qim_us_per_msg() const {
  if (!qim_cores || delivered_rate <= 0) return std::nullopt;
  return *qim_cores * 1e6 / delivered_rate;
}

std::optional<double> LadderRow::store_us_per_msg() const {
  auto cores = store_engine_cores();
  if (!cores || delivered_rate <= 0) return std::nullopt;
  return *cores * 1e6 / delivered_rate;
}

Result<std::vector<LadderRow>> parse_ladder_csv(std::string_view text) {
  static const std::vector<std::string> kNeeded = {"config",
                                                   "offered_rate",
                                                   "delivered_rate",
                                                   "sent",
                                                   "acked",
                                                   "delivered",
                                                   "delivered_pct",
                                                   "ack_p99_ms",
                                                   "e2e_p50_ms",
                                                   "e2e_p99_ms",
                                                   "server_cores",
                                                   "inserts_per_msg",
                                                   "updates_per_msg",
                                                   "reads_per_msg",
                                                   "lwts_per_msg",
                                                   "mean_page",
                                                   "slo",
                                                   "process_cores",
                                                   "history_inserts_per_msg"};
  std::vector<LadderRow> rows;
  std::map<std::string, size_t> column;  // of the last header seen
  size_t line_no = 0;
  for (auto line : split(text, '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    auto bad = [&](const std::string& why) {
      return Error(Errc::kCorruptEntry, "ladder CSV line " + std::to_string(line_no) + ": " + why);
    };
    auto fields = split(line, ',');
    if (fields[0] == "config") {
      column.clear();
      for (size_t i = 0; i < fields.size(); ++i) column[std::string(fields[i])] = i;
      for (const auto& n : kNeeded)
        if (!column.count(n)) return bad("the header has no column '" + n + "'");
      continue;
    }
    if (column.empty()) return bad("a row before the header");
    auto field = [&](const std::string& name) -> std::string_view {
      const size_t i = column.at(name);
      return i < fields.size() ? fields[i] : std::string_view();
    };
    std::string problem;
    auto num = [&](const std::string& name) -> std::optional<double> {
      std::string_view f = field(name);
      if (f.empty()) return std::nullopt;
      double v = 0;
      auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
      if (ec != std::errc() || end != f.data() + f.size()) {
        if (problem.empty()) problem = "column '" + name + "' is not a number: '" + std::string(f) + "'";
        return std::nullopt;
      }
      return v;
    };
    auto need = [&](const std::string& name) {
      auto v = num(name);
      if (!v && problem.empty()) problem = "column '" + name + "' is empty";
      return v.value_or(0);
    };
    LadderRow r;
    r.config = std::string(field("config"));
    r.offered = need("offered_rate");
    r.delivered_rate = need("delivered_rate");
    r.sent = static_cast<uint64_t>(need("sent"));
    r.acked = static_cast<uint64_t>(need("acked"));
    r.delivered = static_cast<uint64_t>(need("delivered"));
    r.delivered_pct = need("delivered_pct");
    r.ack_p99 = need("ack_p99_ms");
    r.e2e_p50 = need("e2e_p50_ms");
    r.e2e_p99 = need("e2e_p99_ms");
    r.qim_cores = num("server_cores");
    r.inserts = num("inserts_per_msg");
    r.updates = num("updates_per_msg");
    r.reads = num("reads_per_msg");
    r.lwts = num("lwts_per_msg");
    r.mean_page = num("mean_page");
    r.history_inserts = num("history_inserts_per_msg");
    r.slo = field("slo") == "pass";
    if (column.count("syncs_per_msg")) r.syncs = num("syncs_per_msg").value_or(0);
    if (column.count("sync_reads_per_msg")) r.sync_reads = num("sync_reads_per_msg");
    if (!parse_pairs(field("process_cores"), r.process_cores) && problem.empty())
      problem = "column 'process_cores' is not name=value;...";
    if (auto it = column.find("engine_per_msg"); it != column.end() && it->second < fields.size()) {
      // The last column; an error text may hold commas, so it is the rest of the line.
      std::string rest(fields[it->second]);
      for (size_t i = it->second + 1; i < fields.size(); ++i) rest += "," + std::string(fields[i]);
      if (rest.rfind("error: ", 0) == 0) {
        r.engine_error = rest.substr(7);
      } else if (!parse_pairs(rest, r.engine) && problem.empty()) {
        problem = "column 'engine_per_msg' is not name=value;...";
      }
    }
    if (r.config.empty() && problem.empty()) problem = "no config";
    if (!problem.empty()) return bad(problem);
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string ladder_markdown(const std::vector<LadderRow>& rows) {
  std::vector<std::string> configs;
  std::set<double> rates;
  for (const auto& r : rows) {
    if (std::find(configs.begin(), configs.end(), r.config) == configs.end()) configs.push_back(r.config);
    rates.insert(r.offered);
  }
  std::string out =
      "| configuration | offered msg/s | delivered msg/s | delivered % | backlog | SEND_ACK P99 | e2e P50 | "
      "e2e P99 "
      "| e2e P99 ÷ relay | store engine CPU (cores) | store CPU µs/msg | qim CPU (cores) | qim CPU µs/msg | "
      "engine per msg: "
      "writes / "
      "reads / LWT | store counters per msg: ins / upd / read / LWT (+ history ins) | SYNC per msg: frames / "
      "store reads | mean page | SLO |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    const LadderRow* relay = find(rows, "relay", r.offered);
    std::string store = r.inserts ? opt(r.inserts, 2) + " / " + opt(r.updates, 2) + " / " + opt(r.reads, 2) +
                                        " / " + opt(r.lwts, 2) + " (+" + opt(r.history_inserts, 2) + ")"
                                  : "-";
    out += "| " + r.config + " | " + fixed(r.offered, 0) + " | " + fixed(r.delivered_rate, 0) + " | " +
           fixed(r.delivered_pct, 2) + "% | " + std::to_string(r.backlog()) + " | " + ms(r.ack_p99) + " | " +
           ms(r.e2e_p50) + " | " + ms(r.e2e_p99) + " | " +
           (relay && r.config != "relay" ? ratio(r.e2e_p99, relay->e2e_p99) : "-") + " | " +
           opt(r.store_engine_cores(), 2) + " | " + opt(r.store_us_per_msg(), 0) + " | " +
           opt(r.qim_cores, 2) + " | " + opt(r.qim_us_per_msg(), 0) + " | " + engine_ops(r) + " | " + store +
           " | " + fixed(r.syncs, 3) + " / " + opt(r.sync_reads, 3) + " | " + opt(r.mean_page, 2) + " | " +
           (r.slo ? "pass" : "FAIL") + " |\n";
  }

  out +=
      "\n**Against the ceiling** (the relay: the protocol with no storage, same load generator, same "
      "run).\n\n"
      "| configuration | highest rate within the SLO | ÷ relay's | highest rate at 100% delivered | ÷ "
      "relay's |\n"
      "|---|---|---|---|---|\n";
  const auto relay_slo = highest(rows, "relay", [](const LadderRow& r) { return r.slo; });
  const auto relay_all = highest(rows, "relay", all_delivered);
  for (const auto& c : configs) {
    const auto slo = highest(rows, c, [](const LadderRow& r) { return r.slo; });
    const auto all = highest(rows, c, all_delivered);
    out += "| " + c + " | " + opt(slo, 0) + " | " + ratio(slo, relay_slo) + " | " + opt(all, 0) + " | " +
           ratio(all, relay_all) + " |\n";
  }
  if (std::none_of(rows.begin(), rows.end(), [](const LadderRow& r) { return r.config == "relay"; }))
    out += "\nThe relay did not run: no ratio to the ceiling.\n";
  else if (!relay_slo)
    out += "\nThe relay passed no step within the SLO: no ratio to its highest rate.\n";

  out +=
      "\n**The seed's ratios, per step** (`-`: a configuration did not run that step).\n\n"
      "| offered msg/s | page 64 ÷ page 1 e2e P99 | page 64 ÷ page 1 store CPU per msg | scylla ÷ redis e2e "
      "P99 "
      "| LWT per record: scylla-p64 / scylla-lwt |\n|---|---|---|---|---|\n";
  for (double rate : rates) {
    const LadderRow* p64 = find(rows, "scylla-p64", rate);
    const LadderRow* p1 = find(rows, "scylla-p1", rate);
    const LadderRow* redis = find(rows, "redis", rate);
    const LadderRow* lwt = find(rows, "scylla-lwt", rate);
    if (!p64 && !p1 && !redis && !lwt) continue;
    out += "| " + fixed(rate, 0) + " | " + (p64 && p1 ? ratio(p64->e2e_p99, p1->e2e_p99) : "-") + " | " +
           (p64 && p1 ? ratio(p64->store_us_per_msg(), p1->store_us_per_msg()) : "-") + " | " +
           (p64 && redis ? ratio(p64->e2e_p99, redis->e2e_p99) : "-") + " | " + opt(lwt_per_record(p64), 2) +
           " / " + opt(lwt_per_record(lwt), 2) + " |\n";
  }
  const auto p64_all = highest(rows, "scylla-p64", all_delivered);
  const auto lwt_all = highest(rows, "scylla-lwt", all_delivered);
  out += "\nscylla (page 64) ÷ scylla-lwt, highest rate at 100% delivered: " + opt(p64_all, 0) + " ÷ " +
         opt(lwt_all, 0) + " = " + ratio(p64_all, lwt_all) + ".\n";
  return out + targets_markdown(rows);
}

}  // namespace qim::load
