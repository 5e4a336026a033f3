#pragma once
// Which (user, day bucket) pairs this process has registered in the retention ledger. Registration is an
// LWT, so it is done at most once per user and day: a cache hit skips it. An entry never outlives its
// bucket's validity (it is dropped once the bucket may be swept), and an expired bucket never consults
// the cache at all: it takes the expiry branch first (ADR-0022 section 2).

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_set>

#include "core/clock.h"
#include "core/ids.h"

namespace qim::scylla {

class LedgerCache {
 public:
  explicit LedgerCache(size_t max_entries = 1 << 20) : max_entries_(max_entries) {}

  bool contains(const UserId& user, DayBucket bucket) const;
  void insert(const UserId& user, DayBucket bucket);
  // Drops every entry of a bucket that is no longer valid (called when the oldest valid day moves on).
  void forget_before(DayBucket first_valid);

 private:
  static std::string key(const UserId& user, DayBucket bucket);

  size_t max_entries_;
  mutable std::mutex mu_;
  std::unordered_set<std::string> registered_;
  int64_t oldest_day_ = INT64_MAX;
};

}  // namespace qim::scylla
