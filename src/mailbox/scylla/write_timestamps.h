#pragma once
// The write timestamps of ADR-0022 section 2. Cells resolve last-write-wins by timestamp, so a column
// written USING TIMESTAMP t can only be replaced by a write with a larger t: the storage engine, not
// Paxos, keeps it monotonic. Only the 48-bit log offset goes into a timestamp (the epoch is in the
// primary key), which keeps every timestamp far below ScyllaDB's "now + 3 days" limit.

#include <cstdint>
#include <string>

#include "core/mailbox_seq.h"
#include "core/status.h"

namespace qim::scylla {

// ScyllaDB's restrict_future_timestamp refuses timestamps past now + 3 days; Cassandra has no such check,
// so we refuse anything at or above 2^48 ourselves, before it is sent.
inline Result<int64_t> checked_timestamp(uint64_t ts, const char* column) {
  if (ts > kMaxOffset) {
    return Error(Errc::kInvariant, std::string("write timestamp ") + std::to_string(ts) + " for " + column +
                                       " is not below 2^48; refusing to write it");
  }
  return static_cast<int64_t>(ts);
}

// frontier_offset and bucket_max_seq: the offset itself, so the larger offset wins.
inline Result<int64_t> monotonic_max_timestamp(Offset offset, const char* column) {
  return checked_timestamp(offset.value, column);
}

// Dispatch identity: 2^48 - 1 - offset, so the earliest observation wins.
inline Result<int64_t> first_writer_timestamp(Offset offset) {
  QIM_RETURN_IF_ERROR(check_offset(offset));
  return checked_timestamp(kMaxOffset - offset.value, "mailbox_dispatch");
}

// bigint columns hold mailbox_seq bit for bit (a seq of epoch >= 2^15 reads as a negative bigint).
inline int64_t seq_to_bigint(MailboxSeq seq) {
  return static_cast<int64_t>(seq.raw());
}
inline MailboxSeq seq_from_bigint(int64_t v) {
  return MailboxSeq::from_raw(static_cast<uint64_t>(v));
}

}  // namespace qim::scylla
