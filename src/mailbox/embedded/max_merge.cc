#include "mailbox/embedded/max_merge.h"

#include <algorithm>

#include "mailbox/embedded/rows.h"

namespace qim::embedded {

bool MaxU64Merge::Merge(const rocksdb::Slice&, const rocksdb::Slice* existing, const rocksdb::Slice& value,
                        std::string* merged, rocksdb::Logger*) const {
  auto operand = decode_u64_value(std::string_view(value.data(), value.size()), "merge operand");
  if (!operand.ok()) return false;
  uint64_t best = *operand;
  if (existing != nullptr) {
    auto stored = decode_u64_value(std::string_view(existing->data(), existing->size()), "stored value");
    if (!stored.ok()) return false;
    best = std::max(best, *stored);
  }
  *merged = u64_value(best);
  return true;
}

}  // namespace qim::embedded
