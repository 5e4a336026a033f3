#pragma once
// What else is kept beside a mailbox's entries (the inbox's conversation rows and index, src/inbox/):
// a sink ContractStore::write_chunks hands every entry it writes, after the backend's write_entries landed
// and before write_chunks answers OK. So a record's sink writes land before the frontier can pass it, and a
// record whose sink write failed is written again (entries and sink) like one whose entries failed: the
// frontier does not move over it. A sink's writes must be idempotent upserts (a replay, a retried page or a
// stale owner writes the same entries again) and must not read on this path.

#include <span>

#include "core/mailbox_seq.h"
#include "core/sharding.h"
#include "core/status.h"
#include "mailbox/message.h"

namespace qim {

class EntrySink {
 public:
  virtual ~EntrySink() = default;
  // `entries` were just written at `epoch` in `shard` (all of that shard; any order). An error fails the
  // write_chunks call with it. Thread-safe: called from every shard worker.
  virtual Status entries_written(ShardId shard, Epoch epoch, std::span<const MailboxEntry> entries) = 0;
};

}  // namespace qim
