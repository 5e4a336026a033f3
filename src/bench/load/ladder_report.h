#pragma once
// The ladder's report (scripts/bench/ladder.sh): reads the CSV qim-load writes, one file per
// configuration concatenated (one header each is fine), and renders the seed's table (ADR-0022), each
// configuration's highest rate within the SLO as a ratio to the relay's, and the ratios the seed's
// conclusions rest on, per step: page 64 / page 1 (e2e P99, store CPU per message), scylla / scylla-lwt
// (highest rate at 100% delivered, LWT per record), scylla / redis (e2e P99); then issue 10's targets.
//
// Configuration names the ratios look for: relay, embedded, scylla-p64, scylla-p1, scylla-lwt, redis.
// Any other name is shown in the table and left out of the ratios.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace qim::load {

// One CSV row of qim-load, the fields the report reads.
struct LadderRow {
  std::string config;
  double offered = 0, delivered_rate = 0, delivered_pct = 0;
  uint64_t sent = 0, acked = 0, delivered = 0;
  double ack_p99 = 0, e2e_p50 = 0, e2e_p99 = 0;
  std::optional<double> qim_cores, mean_page;
  std::optional<double> inserts, updates, reads, lwts, history_inserts;  // the store's own counters
  std::map<std::string, double> process_cores;                           // name -> cores
  std::map<std::string, double> engine;                                  // engine counter -> per message
  std::string engine_error;
  double syncs = 0;                  // SYNC frames the receivers sent, per message
  std::optional<double> sync_reads;  // the gateways' store reads (SYNC), per message
  bool slo = false;

  uint64_t backlog() const { return sent - std::min(sent, delivered); }
  // The store engine's CPU (Cassandra or the store's Redis) in cores, if it was measured.
  std::optional<double> store_engine_cores() const;
  // Microseconds of the QIM processes' CPU per message delivered.
  std::optional<double> qim_us_per_msg() const;
  // Microseconds of store-engine CPU per message delivered.
  std::optional<double> store_us_per_msg() const;
};

// Rows of every configuration, in file order. CorruptEntry naming the line and the column for a row
// that does not parse or a header without a column the report needs.
Result<std::vector<LadderRow>> parse_ladder_csv(std::string_view text);

// The Markdown report: the table, the ceiling ratios, the seed's ratios, and issue 10's performance
// targets with this run's figure and verdict for each.
std::string ladder_markdown(const std::vector<LadderRow>& rows);

}  // namespace qim::load
