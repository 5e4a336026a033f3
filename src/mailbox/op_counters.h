#pragma once
// Store operations counted by kind, so benchmarks print operations per message as ADR-0022 does.

#include <atomic>
#include <cstdint>
#include <string>

namespace qim {

struct OpCounts {
  uint64_t inserts = 0;  // new rows/keys (entries, proofs, identities)
  uint64_t updates = 0;  // writes to existing rows (frontier, ledger)
  uint64_t reads = 0;
  uint64_t lwts = 0;     // conditional writes (Paxos on CQL)
  uint64_t scripts = 0;  // Lua calls (Redis)
  uint64_t frontier_writes = 0;
  uint64_t pages = 0;          // finish_dispatch_page calls that wrote the frontier
  uint64_t paged_records = 0;  // records finished inside those pages

  OpCounts operator-(const OpCounts& o) const;
  double mean_page() const { return pages ? static_cast<double>(paged_records) / pages : 0.0; }
  std::string to_string() const;
};

// Thread-safe counters; backends bump them as they issue operations.
class OpCounters {
 public:
  std::atomic<uint64_t> inserts{0}, updates{0}, reads{0}, lwts{0}, scripts{0};
  std::atomic<uint64_t> frontier_writes{0}, pages{0}, paged_records{0};

  OpCounts snapshot() const;
};

}  // namespace qim
