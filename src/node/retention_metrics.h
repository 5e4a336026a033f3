#pragma once
// What the retention sweeper reports (exposed on /metrics as qim_retention_*, docs/running.md).

#include <cstdint>

namespace qim {

struct RetentionMetrics {
  uint64_t rounds = 0;           // rounds run
  uint64_t users_swept = 0;      // users whose sweep_retention returned (whether or not it expired anything)
  uint64_t buckets_expired = 0;  // day buckets dropped from ledgers (their entries now below the trim)
  uint64_t errors = 0;           // failed sweeps or listings (a missing proof counts here; retried next pass)
  uint64_t passes = 0;           // complete passes over every owned shard's users
  int64_t last_round_ms = 0;     // store-clock time the last round ended (0: none yet)
  uint64_t last_round_users = 0;  // users the last round swept
};

}  // namespace qim
