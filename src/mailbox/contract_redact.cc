// ContractStore::redact_message: the mailbox half of a recall (docs/adr/0129), apart from the dispatch
// rules in contract_store.cc. The store finds the recalled SEND's entries by its dispatch identities (the
// entries of a record sit at compose(epoch, canonical offset)) and asks the backend to drop their body.
#include <algorithm>
#include <string>

#include "mailbox/contract_store.h"
#include "mailbox/redaction.h"

namespace qim {

namespace {

// Parts a shard's records of one message can have: kMaxChunks chunks of kMaxChunkEntries per record
// bounds nothing lower than this, and fanout cuts at 8,192 recipients, so a shard of 2^20 recipients has
// 128 parts. The probe stops at the first part that has no identity (fanout numbers them from 0).
constexpr uint32_t kMaxParts = 1024;

}  // namespace

Status ContractStore::redact_message(ShardId shard, Epoch epoch, MessageId target,
                                     std::span<const UserId> users) {
  QIM_RETURN_IF_ERROR(check_epoch(epoch));
  QIM_ASSIGN_OR_RETURN(ShardState * state, shard_state(shard));
  for (const UserId& user : users) {
    if (context_.shards.shard_of(user) != shard) {
      return Error(Errc::kInvalidArgument, "recipient " + user.str() + " belongs to shard " +
                                               std::to_string(context_.shards.shard_of(user).value) +
                                               ", not " + std::to_string(shard.value));
    }
  }
  if (users.empty()) return {};
  {
    std::lock_guard lock(state->mu);
    QIM_RETURN_IF_ERROR(owner_frontier(*state, shard, epoch));  // a fenced owner writes nothing more
  }
  // Every epoch the SEND may have been materialised at: each that finished a record (a SEND's entries are
  // written before its finish), and this owner's (the SEND may be in flight in the same page).
  QIM_ASSIGN_OR_RETURN(std::vector<MailboxSeq> frontiers, backend_->read_frontiers(shard));
  std::vector<Epoch> epochs{epoch};
  for (MailboxSeq f : frontiers) {
    if (f.epoch() < epoch) epochs.push_back(f.epoch());
  }
  std::vector<MailboxSeq> seqs;
  for (Epoch e : epochs) {
    for (uint32_t part = 0; part < kMaxParts; ++part) {
      const DispatchId id = message_dispatch_id(target, shard, part);
      std::optional<Offset> canonical;
      if (e == epoch) {
        std::lock_guard lock(state->mu);
        if (const InflightRecord* rec = state->inflight.find(id); rec != nullptr && rec->epoch == epoch) {
          canonical = rec->canonical_offset;  // its identity write may still be in flight (scylla)
        }
      }
      if (!canonical) {
        QIM_ASSIGN_OR_RETURN(auto stored, backend_->read_identity(shard, e, id));
        if (!stored) break;
        canonical = stored->canonical_offset;
      }
      QIM_ASSIGN_OR_RETURN(MailboxSeq seq, compose(e, *canonical));
      seqs.push_back(seq);
    }
  }
  if (seqs.empty()) return {};  // the SEND left nothing in this shard (or its identities are gone)
  std::vector<EntryKey> keys;
  keys.reserve(seqs.size() * users.size());
  for (MailboxSeq seq : seqs) {
    for (const UserId& user : users) keys.push_back(EntryKey{user, seq});
  }
  if (Status r = backend_->redact_entries(keys); !r.ok()) {
    std::lock_guard lock(state->mu);
    return after_failed_write(*state, shard, epoch, r.error(), "entry redaction");
  }
  return {};
}

}  // namespace qim
