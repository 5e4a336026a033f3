#pragma once
// A compaction filter that drops entry rows past their expiry, so TTL-expired entries stop taking disk
// space. Reads skip expired rows on their own; this only reclaims space and never changes what a read
// returns. Rows it cannot parse are kept, so a corrupt row stays visible to the read that reports it.

#include <memory>

#include <rocksdb/compaction_filter.h>

#include "core/clock.h"

namespace qim::embedded {

class EntryExpiryFilter final : public rocksdb::CompactionFilter {
 public:
  explicit EntryExpiryFilter(std::shared_ptr<const Clock> clock) : clock_(std::move(clock)) {}

  bool Filter(int level, const rocksdb::Slice& key, const rocksdb::Slice& value, std::string* new_value,
              bool* value_changed) const override;
  const char* Name() const override { return "qim.EntryExpiryFilter"; }

 private:
  std::shared_ptr<const Clock> clock_;
};

}  // namespace qim::embedded
