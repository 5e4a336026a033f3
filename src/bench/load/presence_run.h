#pragma once
// The load generator's presence mode (qim-load --presence-contacts; issue 38 item 9: "one presence change
// of a user with 1,000 contacts to all their online contacts, P99"). Per contact count N, fresh users: N
// contacts connect and each sends one message to the subject, so each shares a direct conversation with
// it (docs/protocol.md "Presence": a user's direct peers see its presence); each waits for its own copy,
// so the conversation is in its mailbox and its connection knows the peer. Then, `changes` times, the
// subject connects (a change to online) and closes (a change to offline, after the deployment's grace,
// QIM_PRESENCE_GRACE_MS); per change it measures the time from the subject's connect (or close) to the
// first and to the last contact's PRESENCE frame about it. A change some contact never saw within the
// drain is counted as missing, not hidden.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

namespace qim::load {

struct PresenceOptions {
  std::string host = "127.0.0.1";
  std::vector<uint16_t> ports = {7400};  // contact i connects to port i mod G; the subject to the first
  std::string secret;
  std::string config = "embedded";
  uint32_t changes = 20;      // online/offline cycles of the subject
  double drain_seconds = 30;  // how long one change may take to reach every contact
  double grace_seconds = 5;  // the deployment's QIM_PRESENCE_GRACE_MS: an offline change may take that longer
  unsigned io_threads = 1;
  // Admin ports whose /metrics are summed over the changes (store reads, presence frames pushed); empty:
  // those columns stay "-".
  std::vector<uint16_t> admin_ports;
};

struct PresenceResult {
  std::string config;
  uint32_t contacts = 0;
  uint32_t changes = 0;  // cycles run (each an online and an offline change)
  uint32_t missing = 0;  // changes that some contact did not see within the drain
  double setup_seconds = 0;
  // Over the changes, per change (online or offline), from the deployment's /metrics; < 0: not read.
  double store_reads_per_change = -1;
  double frames_pushed_per_change = -1;
  std::vector<double> online_first_ms, online_last_ms;    // per online change: connect -> first / last
  std::vector<double> offline_first_ms, offline_last_ms;  // per offline change: close -> first / last
};

// Runs one contact count (1..10,000). Errors are what prevented a measurement (a connection, AUTH or SEND
// that failed: Transport, Unauthenticated, or the refusal's code; InvalidArgument for options out of
// range); a change not seen by every contact is a figure (`missing`), not an error. `progress` gets a line
// about once a second during the set-up and one per change.
Result<PresenceResult> run_presence(const PresenceOptions& options, uint32_t contacts,
                                    const std::function<void(const std::string&)>& progress);

// The results as a Markdown table (one row per contact count and direction: P50, P99, max to the first
// and to the last contact) and as CSV with the same columns.
std::string presence_markdown(const std::vector<PresenceResult>& results);
std::string presence_csv(const std::vector<PresenceResult>& results);

}  // namespace qim::load
