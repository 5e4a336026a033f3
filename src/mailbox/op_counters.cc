#include "mailbox/op_counters.h"

#include <fmt/format.h>

namespace qim {

OpCounts OpCounts::operator-(const OpCounts& o) const {
  return OpCounts{inserts - o.inserts, updates - o.updates,
                  reads - o.reads,     lwts - o.lwts,
                  scripts - o.scripts, frontier_writes - o.frontier_writes,
                  pages - o.pages,     paged_records - o.paged_records};
}

std::string OpCounts::to_string() const {
  return fmt::format("inserts={} updates={} reads={} lwt={} scripts={} frontier_writes={} mean_page={:.2f}",
                     inserts, updates, reads, lwts, scripts, frontier_writes, mean_page());
}

OpCounts OpCounters::snapshot() const {
  return OpCounts{inserts.load(), updates.load(),         reads.load(), lwts.load(),
                  scripts.load(), frontier_writes.load(), pages.load(), paged_records.load()};
}

}  // namespace qim
