// ContractStore::redact_message: the mailbox half of a recall (docs/adr/0129, 0157), apart from the
// dispatch rules in contract_store.cc. The store finds the recalled SEND's entries, and its edits' entries,
// by their dispatch identities (the entries of a record sit at compose(epoch, canonical offset)) and asks
// the backend to drop the SEND's body and the edits' text.
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

// users x seqs.
std::vector<EntryKey> entry_keys(std::span<const MailboxSeq> seqs, std::span<const UserId> users) {
  std::vector<EntryKey> keys;
  keys.reserve(seqs.size() * users.size());
  for (MailboxSeq seq : seqs) {
    for (const UserId& user : users) keys.push_back(EntryKey{user, seq});
  }
  return keys;
}

}  // namespace

Result<std::vector<MailboxSeq>> ContractStore::dispatched_seqs(ShardState& state, ShardId shard,
                                                               std::span<const Epoch> epochs,
                                                               MessageId message) {
  std::vector<MailboxSeq> seqs;
  for (Epoch e : epochs) {
    for (uint32_t part = 0; part < kMaxParts; ++part) {
      const DispatchId id = message_dispatch_id(message, shard, part);
      std::optional<Offset> canonical;
      if (e == epochs.front()) {
        std::lock_guard lock(state.mu);
        if (const InflightRecord* rec = state.inflight.find(id); rec != nullptr && rec->epoch == e) {
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
  return seqs;
}

Status ContractStore::redact_message(ShardId shard, Epoch epoch, const RecallEntry& recall,
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
  // Every epoch the SEND and its edits may have been materialised at: each that finished a record (a
  // record's entries are written before its finish), and this owner's (they may be in flight in this page).
  QIM_ASSIGN_OR_RETURN(std::vector<MailboxSeq> frontiers, backend_->read_frontiers(shard));
  std::vector<Epoch> epochs{epoch};
  for (MailboxSeq f : frontiers) {
    if (f.epoch() < epoch) epochs.push_back(f.epoch());
  }
  QIM_ASSIGN_OR_RETURN(std::vector<MailboxSeq> sends, dispatched_seqs(*state, shard, epochs, recall.target));
  std::vector<MailboxSeq> edits;
  for (MessageId edit : recall.edits) {
    QIM_ASSIGN_OR_RETURN(std::vector<MailboxSeq> seqs, dispatched_seqs(*state, shard, epochs, edit));
    edits.insert(edits.end(), seqs.begin(), seqs.end());
  }
  // The SEND's entries lose their body; each edit entry keeps its JSON with "body":"" (redaction.h).
  Status r;
  if (!sends.empty()) r = backend_->redact_entries(entry_keys(sends, users));
  if (r.ok() && !edits.empty()) {
    const MessageId target = recall.target;
    r = backend_->redact_edit_entries(entry_keys(edits, users),
                                      [target](std::string_view client_msg_id, std::string_view body) {
                                        return redacted_edit_body(target, client_msg_id, body);
                                      });
  }
  if (!r.ok()) {
    std::lock_guard lock(state->mu);
    return after_failed_write(*state, shard, epoch, r.error(), "entry redaction");
  }
  return {};
}

}  // namespace qim
