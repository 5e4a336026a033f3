#pragma once
// The group store's operation counters on /metrics (qim_group_store_ops_total{kind}), beside the mailbox
// store's: the gateway's membership reads on each group frame and fanout's loads, which the group load
// figures divide per message (docs/benchmarks.md "Groups").

#include <string>

#include "groups/group_store.h"

namespace qim {

// The family in the Prometheus text format; empty for a process without a group store (null).
std::string group_store_prometheus(const GroupStore* store);

}  // namespace qim
