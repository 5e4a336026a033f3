#pragma once
// The in-process table of in-flight records (ADR-0022 section 3): which chunks of a begun dispatch have
// been written. Not persisted: after a restart it is empty and an Existing replay rewrites every entry.
// One table per shard; the caller (ContractStore) serialises access with the shard's lock.

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/ids.h"
#include "core/mailbox_seq.h"
#include "mailbox/dispatch.h"
#include "mailbox/pending_write.h"

namespace qim {

struct InflightRecord {
  Epoch epoch;
  DispatchIdentity identity;
  Offset canonical_offset;
  std::vector<bool> chunk_written;
  // The claim's identity write while it may still be in flight; the frontier passes the record only once
  // it is waited for and OK. Null when the identity is known stored.
  std::shared_ptr<PendingWrite> identity_write;

  bool complete() const;
  std::vector<uint32_t> completed_chunks() const;
};

class InflightTable {
 public:
  // Starts tracking a record, or keeps the chunk state of one already tracked with the same canonical.
  InflightRecord& track(Epoch epoch, const DispatchIdentity& identity, Offset canonical, bool all_written);
  InflightRecord* find(const DispatchId& id);
  void erase(const DispatchId& id) { records_.erase(id); }
  // Drops every record the frontier `w` covers (its canonical seq at or below w) and every record of an
  // older epoch than w's: nothing can finish them any more, so they would only leak. Returns how many.
  // With this called on each frontier move, the table holds only records begun above the frontier.
  size_t erase_covered(MailboxSeq w);
  size_t size() const { return records_.size(); }
  // Blocks until every tracked record's identity write is done (their outcomes are dropped: whoever
  // calls this is about to forget the records).
  void wait_identity_writes();

 private:
  std::unordered_map<DispatchId, InflightRecord> records_;
};

}  // namespace qim
