#include "mailbox/embedded/expiry_filter.h"

#include "mailbox/embedded/rows.h"

namespace qim::embedded {

bool EntryExpiryFilter::Filter(int, const rocksdb::Slice&, const rocksdb::Slice& value, std::string*,
                               bool*) const {
  auto expires = entry_expiry(std::string_view(value.data(), value.size()));
  return expires.ok() && *expires <= clock_->now_ms();
}

}  // namespace qim::embedded
