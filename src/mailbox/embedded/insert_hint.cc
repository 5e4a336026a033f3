#include "mailbox/embedded/insert_hint.h"

#include <utility>

namespace qim::embedded {

InsertHintGroups::InsertHintGroups(std::string name, size_t suffix_bytes)
    : name_(std::move(name)), suffix_bytes_(suffix_bytes) {}

rocksdb::Slice InsertHintGroups::Transform(const rocksdb::Slice& key) const {
  return rocksdb::Slice(key.data(), key.size() - suffix_bytes_);
}

bool InsertHintGroups::InDomain(const rocksdb::Slice& key) const {
  return key.size() > suffix_bytes_;
}

}  // namespace qim::embedded
