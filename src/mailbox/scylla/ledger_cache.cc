#include "mailbox/scylla/ledger_cache.h"

#include <algorithm>

namespace qim::scylla {

std::string LedgerCache::key(const UserId& user, DayBucket bucket) {
  return std::to_string(bucket.value) + "/" + user.str();
}

bool LedgerCache::contains(const UserId& user, DayBucket bucket) const {
  std::lock_guard lock(mu_);
  return registered_.contains(key(user, bucket));
}

void LedgerCache::insert(const UserId& user, DayBucket bucket) {
  std::lock_guard lock(mu_);
  // Bounded: when full, start over; the cost is one more LWT per user and day, never a wrong answer.
  if (registered_.size() >= max_entries_) registered_.clear();
  registered_.insert(key(user, bucket));
  oldest_day_ = std::min(oldest_day_, bucket.value);
}

void LedgerCache::forget_before(DayBucket first_valid) {
  std::lock_guard lock(mu_);
  if (oldest_day_ >= first_valid.value) return;
  std::erase_if(registered_, [&](const std::string& k) {
    return std::stoll(k.substr(0, k.find('/'))) < first_valid.value;
  });
  oldest_day_ = first_valid.value;
}

}  // namespace qim::scylla
