#pragma once
// A RocksDB merge operator keeping the maximum of 8-byte little-endian u64 values: the embedded form
// of a CQL cell written USING TIMESTAMP (ADR-0022 section 2). Frontier offsets and bucket proofs are
// written as blind merges, so a lower (late or replayed) write never moves a row back and the hot path
// needs no read. A malformed operand fails the merge, which RocksDB reports as Corruption on read.

#include <rocksdb/merge_operator.h>

namespace qim::embedded {

class MaxU64Merge final : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice& key, const rocksdb::Slice* existing, const rocksdb::Slice& value,
             std::string* merged, rocksdb::Logger* logger) const override;
  const char* Name() const override { return "qim.MaxU64Merge"; }
};

}  // namespace qim::embedded
