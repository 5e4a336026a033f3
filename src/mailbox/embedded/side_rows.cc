#include "mailbox/embedded/side_rows.h"

#include <cstring>

#include "core/big_endian.h"
#include "mailbox/embedded/insert_hint.h"

namespace qim::embedded {

bool Max16Merge::Merge(const rocksdb::Slice&, const rocksdb::Slice* existing, const rocksdb::Slice& value,
                       std::string* merged, rocksdb::Logger*) const {
  if (value.size() < 16) return false;
  if (existing != nullptr) {
    if (existing->size() < 16) return false;
    if (std::memcmp(existing->data(), value.data(), 16) > 0) {
      merged->assign(existing->data(), existing->size());
      return true;
    }
  }
  merged->assign(value.data(), value.size());
  return true;
}

bool RefExpiryFilter::Filter(int, const rocksdb::Slice&, const rocksdb::Slice& value, std::string*,
                             bool*) const {
  if (value.size() < 16) return false;
  const auto expires = static_cast<int64_t>(get_be64(std::string_view(value.data() + 8, 8)));
  return expires <= clock_->now_ms();
}

std::array<rocksdb::ColumnFamilyOptions, kSideFamilyCount> side_family_options(
    const std::shared_ptr<rocksdb::MergeOperator>& merge, const rocksdb::CompactionFilter* filter) {
  std::array<rocksdb::ColumnFamilyOptions, kSideFamilyCount> out;
  // An index key ends with its 8-byte seq; a row key is updated again and again (suffix 0).
  auto pair_hint = std::make_shared<InsertHintGroups>("qim.InboxPairHint", sizeof(uint64_t));
  auto same_key_hint = std::make_shared<InsertHintGroups>("qim.InboxSameKeyHint", 0);
  out[kInboxIndex].memtable_insert_with_hint_prefix_extractor = pair_hint;
  out[kInboxRows].memtable_insert_with_hint_prefix_extractor = same_key_hint;
  out[kInboxIndex].compaction_filter = filter;  // put, expiring
  out[kInboxRows].merge_operator = merge;       // max, expiring
  out[kInboxRows].compaction_filter = filter;
  out[kInboxMarks].merge_operator = merge;  // max
  out[kInboxReceipts].merge_operator = merge;
  out[kInboxSettings].merge_operator = merge;
  out[kInboxActivity].compaction_filter = filter;  // put, expiring
  return out;
}

}  // namespace qim::embedded
