#pragma once
// Figures of one load step and their rendering as a Markdown table and CSV (SYSTEM.md section 6).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace qim::load {

// The p-th percentile (0..100) of `samples` (nearest rank; sorts them). 0 for no samples.
double percentile(std::vector<double>& samples, double p);

struct StepResult {
  std::string config;       // e.g. "embedded"
  double offered_rate = 0;  // msg/s asked for
  double seconds = 0;       // how long the step sent
  uint64_t sent = 0;
  uint64_t acked = 0;
  uint64_t delivered = 0;  // distinct messages whose DELIVER reached the recipient
  uint64_t errors = 0;     // ERROR frames
  uint64_t disconnects = 0;
  double ack_p50_ms = 0, ack_p99_ms = 0;
  double e2e_p50_ms = 0, e2e_p99_ms = 0, e2e_max_ms = 0;
  std::optional<double> server_cores;                         // CPU of the qim processes together, in cores
  std::vector<std::pair<std::string, double>> process_cores;  // per process (name, cores), when known
  std::optional<double> inserts_per_msg, updates_per_msg, reads_per_msg, lwts_per_msg;
  // The history store's inserts per message (the archiver's 2 rows, ADR-0018), apart from the mailbox
  // store's: the seed's per-message counts include them, so both are needed for a like-for-like sum.
  std::optional<double> history_inserts_per_msg;
  std::optional<double> mean_page;
  double syncs_per_msg = 0;                  // SYNC frames the receivers sent (after a gap), per message
  std::optional<double> sync_reads_per_msg;  // the gateways' store reads (SYNC), when gateways are apart
  // Counters read at the engine (--engine-counters: Cassandra's per-table metrics, Redis' commandstats),
  // as (name, delta over the step / sent), in the order the command printed them; empty when not asked
  // for or when a sample failed (then `engine_error` says why: never a silent zero).
  std::vector<std::pair<std::string, double>> engine_per_msg;
  std::string engine_error;

  double delivered_pct() const { return sent ? 100.0 * static_cast<double>(delivered) / sent : 0; }
  double delivered_rate() const { return seconds > 0 ? delivered / seconds : 0; }
  // The SLO of a step: 100% delivered and end-to-end P99 <= 250 ms.
  bool slo_pass() const { return sent > 0 && delivered == sent && e2e_p99_ms <= 250.0; }
};

// The lines "<name> <value>" an engine-counter command prints (blank lines and "#" comments skipped), in
// order. CorruptEntry naming the line for anything else (a missing or non-numeric value, a repeated
// name): a half-read sample would give wrong per-message figures.
Result<std::vector<std::pair<std::string, double>>> parse_counters(std::string_view text);
// after - before per name, divided by `messages`; a name missing from `before` counts from 0 (a
// Cassandra metric appears with its first use). CorruptEntry if a counter went down (the engine
// restarted mid-step) or messages is 0.
Result<std::vector<std::pair<std::string, double>>> per_message(
    const std::vector<std::pair<std::string, double>>& before,
    const std::vector<std::pair<std::string, double>>& after, uint64_t messages);

std::string markdown_table(const std::vector<StepResult>& steps);
std::string csv(const std::vector<StepResult>& steps);
// One row per step with each process's CPU in cores; empty when no step knows per-process figures.
std::string process_cpu_table(const std::vector<StepResult>& steps);
// One row per step with the engine's counters per message; empty when no step has any.
std::string engine_ops_table(const std::vector<StepResult>& steps);

}  // namespace qim::load
