#pragma once
// The group mode's figures (qim-load --group-members, group_run.h) and their rendering as a Markdown table
// and CSV, and the choice of which members listen: no I/O, so the unit test drives it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sharding.h"

namespace qim::load {

// P50 / P99 / max of a set of latencies (ms), nearest rank; all 0 with no samples.
struct LatencySummary {
  size_t samples = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
};
LatencySummary summarize(std::vector<double> samples_ms);

// What one group size measured.
struct GroupResult {
  std::string config;      // e.g. "embedded"
  uint32_t members = 0;    // current members, the owner (the sender) included
  uint32_t listeners = 0;  // members connected and following their mailbox (the owner not among them)
  uint32_t messages = 0;   // messages sent to the group
  double rate = 0;         // offered msg/s; 0: one at a time (the next after the last listener had this one)
  double setup_seconds = 0;  // GROUP_CREATE and the GROUP_ADDs, each answered once fanout applied it
  uint32_t acked = 0;        // SEND_ACKs
  // Per message, from SEND: its SEND_ACK, the first and the last listener's DELIVER. The last listener's
  // time counts only messages every listener got (the others are in listener_missing).
  LatencySummary ack, first, last;
  uint64_t listener_missing = 0;  // (listener, message) pairs not shown by the end of the drain
  // Mailboxes read through a fresh connection after the run (SYNC from 0), the listeners' excluded, and
  // the (member, message) pairs missing from them; nullopt when not checked (delivery mode push).
  std::optional<uint32_t> verified_members;
  uint64_t verify_missing = 0;
  uint64_t errors = 0;  // ERROR frames, refused or failed calls, disconnects (first one in first_error)
  std::string first_error;
  // Deltas of the QIM processes' counters over the messages (not the set-up), from /metrics: store
  // operations per entry delivered (members × messages); per message, the group store's reads (the
  // gateway's membership check of each SEND, fanout's loads) and, of those, fanout's loads.
  std::optional<double> inserts_per_entry, updates_per_entry, reads_per_entry, lwts_per_entry;
  std::optional<double> group_reads_per_msg, group_loads_per_msg;

  uint64_t entries() const { return static_cast<uint64_t>(members) * messages; }
  // Every listener showed every message and every mailbox checked holds all of them.
  bool complete() const {
    return messages > 0 && acked == messages && listener_missing == 0 && verify_missing == 0;
  }
};

// Which of a group's `members` listen, at most `count` of them (all when count >= members.size()), in
// the order chosen. The entries of a shard's dispatch record become visible at once (one frontier move
// a record), so the last mailbox written is in whichever shard's record finishes last: the sample holds,
// first, the last member (the end of the last chunk: fanout sorts a shard's recipients and cuts them into
// chunks of `chunk_entries`) of every shard holding members, from the last shard down; then the rest of
// the last shard's last chunk; then members spread evenly over the sorted list. Members that are not
// valid user ids are left out.
std::vector<std::string> choose_listeners(const std::vector<std::string>& members, const ShardMap& shards,
                                          uint32_t chunk_entries, size_t count);

std::string group_markdown(const std::vector<GroupResult>& results);
std::string group_csv(const std::vector<GroupResult>& results);

}  // namespace qim::load
