#pragma once
// The load generator's group mode (qim-load --group-members): per group size, the sender creates a group
// (it is the owner) and adds the members in ops of at most 500 names (docs/protocol.md "Groups"), a sample
// of the members connects and follows its mailbox (client::MailboxFeed), and the sender sends messages to
// the group; per message it measures SEND to SEND_ACK and to the first and the last listener's DELIVER.
// Afterwards the mailboxes of the members that did not listen are read through fresh connections (SYNC
// from 0), so a delivery that never came is counted, not hidden. The QIM processes' /metrics counters
// over the messages give the store operations per delivered entry and fanout's group store loads.

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "bench/load/group_report.h"
#include "core/status.h"

namespace qim::load {

struct GroupOptions {
  std::string host = "127.0.0.1";
  std::vector<uint16_t> ports = {7400};  // gateways' client ports; listener i connects to port i mod G
  std::string secret;                    // QIM_AUTH_SECRET of the gateways, to mint the tokens
  std::string config = "embedded";       // the row label
  // The admin ports whose /metrics are summed (every process of the deployment); empty: no store
  // figures, and no wait for the mailbox nodes to catch up with the set-up.
  std::vector<uint16_t> admin_ports;
  uint32_t shards = 16;          // the deployment's QIM_SHARDS: which members' mailboxes are written last
  uint32_t chunk_entries = 256;  // its QIM_FANOUT_CHUNK_ENTRIES
  uint32_t messages = 20;        // sent to each group
  uint32_t listeners = 10000;    // members connected at most (all of them in a smaller group)
  double rate = 0;               // msg/s; 0: one at a time, each once every listener has the previous one
  uint32_t body_bytes = 100;
  double drain_seconds = 30;  // how long a message (one at a time) or the last one (at a rate) may take
  // Members whose mailbox is read through a fresh connection afterwards (the listeners are checked by
  // what they showed); spread over the members, the owner included. Default: every one.
  uint32_t verify = std::numeric_limits<uint32_t>::max();
  unsigned io_threads = 1;
};

// Builds one group of `members` members (the owner included; 2..1,000,000) and measures it. The group
// has fresh users, so runs never share one. Errors are what prevented a measurement: a connection or AUTH
// that failed (Transport, Unauthenticated), a group op refused (its code and message, e.g. "GROUP_FULL:"
// when QIM_GROUP_MAX_MEMBERS is below `members`), membership not applied in time (Timeout),
// InvalidArgument for options out of range. Failures during the messages are figures of the result
// (errors, missing deliveries), not errors. `progress` gets a line about once a second.
Result<GroupResult> run_group(const GroupOptions& options, uint32_t members,
                              const std::function<void(const std::string&)>& progress);

}  // namespace qim::load
