#pragma once
// What a shard worker reports: how many records it took, how it finished them, and where it stands.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/mailbox_seq.h"
#include "core/sharding.h"

namespace qim {

struct ShardMetrics {
  ShardId shard;
  Epoch epoch;
  MailboxSeq frontier;    // W: the last frontier the store returned
  uint64_t records = 0;   // records taken off the mailbox log (advanced + repeated + skipped)
  uint64_t advanced = 0;  // records that moved the frontier
  uint64_t repeated = 0;  // repeated observations (zero advances)
  uint64_t skipped = 0;   // records that can never be materialised (quarantined)
  std::map<std::string, uint64_t> quarantined;  // those records by the error that refused them
  uint64_t catch_up = 0;                        // records finished one by one at start-up
  uint64_t pages = 0;          // steps after catch-up, each finishing a page (of one, at page limit 1)
  uint64_t paged_records = 0;  // records inside those pages
  uint64_t retries = 0;        // failed steps retried
  uint64_t lag = 0;            // records on the log not finished yet
  // Empty while the worker runs; else the fatal error that stopped it (e.g. the EpochAhead of a stale
  // owner fenced by a newer epoch, naming both epochs and the fence bound).
  std::string stopped;
  double mean_page() const { return pages ? static_cast<double>(paged_records) / pages : 0.0; }
};

// The sum over shards (frontier and epoch left zero; mean page over all pages).
ShardMetrics total(const std::vector<ShardMetrics>& shards);

}  // namespace qim
