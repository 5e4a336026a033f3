#pragma once
// Memtable insert hints (RocksDB's `memtable_insert_with_hint_prefix_extractor`): the memtable keeps,
// per key group, where its last row went in the skip list, and the next row of that group searches
// from there instead of from the top. A search from the top visits a node per level, each a cache
// miss in a 64 MiB memtable: about 3 µs a row on the test VM, the largest self cost of the shard
// workers and the archiver at 8,000 msg/s (docs/benchmarks.md, decision 45).
//
// A group is the key without its last `suffix_bytes` bytes: a user's entries (the seq varies), an
// Outbox partition's history rows (the offset varies), or a key updated again and again (suffix 0:
// the frontier, a bucket proof). Rows of a group must arrive in (about) key order for the hint to
// help; out of order they still go in correctly, only searching further. Each group costs ~250 bytes
// of the memtable's arena while the memtable lives.
//
// Thread safety: stateless, shareable between column families and threads.

#include <rocksdb/slice_transform.h>

#include <cstddef>
#include <memory>
#include <string>

namespace qim::embedded {

class InsertHintGroups final : public rocksdb::SliceTransform {
 public:
  // `name` goes into the OPTIONS file; keys no longer than `suffix_bytes` get no hint.
  InsertHintGroups(std::string name, size_t suffix_bytes);

  const char* Name() const override { return name_.c_str(); }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override;
  bool InDomain(const rocksdb::Slice& key) const override;

 private:
  std::string name_;
  size_t suffix_bytes_;
};

}  // namespace qim::embedded
