#include "node/page.h"

#include "mailbox/redaction.h"

namespace qim {

ErrorAction classify(const Error& error) {
  switch (error.code()) {
    case Errc::kCorruptEntry:
    case Errc::kEpochAhead:
    case Errc::kInvariant:
    case Errc::kConfig:
      return ErrorAction::kFatal;
    case Errc::kDispatchConflict:
    case Errc::kInvalidArgument:
      return ErrorAction::kSkipRecord;
    default:
      return ErrorAction::kRetry;
  }
}

namespace {

struct Begun {
  const QueuedRecord* queued;
  BeginOutcome begin;
  bool advances = false;  // predicted as the store decides: canonical and above the running frontier
};

}  // namespace

Result<PageResult> materialize_page(MailboxStore& store, Quarantine& quarantine, ShardId shard, Epoch epoch,
                                    MailboxSeq w, std::span<const QueuedRecord> records, bool as_page,
                                    spdlog::logger& logger) {
  if (!as_page && records.size() != 1) {
    return Error(Errc::kInvariant,
                 "a record-by-record step takes exactly one record, got " + std::to_string(records.size()));
  }
  PageResult out;
  out.frontier = w;
  std::vector<Begun> begun;
  std::vector<std::pair<const QueuedRecord*, Error>> refused;
  // Every decoded record of the page is begun in one call (its identity reads, then writes, together);
  // the outcomes come back in record order, so refusals are quarantined in log order.
  std::vector<BeginRequest> requests;
  for (const QueuedRecord& q : records) {
    if (q.record.ok()) requests.push_back(BeginRequest{&q.record->identity, q.offset});
  }
  std::vector<Result<BeginOutcome>> outcomes;
  if (!requests.empty()) {
    QIM_ASSIGN_OR_RETURN(outcomes, store.begin_dispatch_page(shard, epoch, requests));
    if (outcomes.size() != requests.size()) {
      return Error(Errc::kInvariant, "begin_dispatch_page answered " + std::to_string(outcomes.size()) +
                                         " of " + std::to_string(requests.size()) + " records");
    }
  }
  size_t next = 0;
  for (const QueuedRecord& q : records) {
    if (!q.record.ok()) {
      refused.emplace_back(&q, q.record.error());
      continue;
    }
    Result<BeginOutcome>& b = outcomes[next++];
    if (!b.ok()) {
      if (classify(b.error()) != ErrorAction::kSkipRecord) return b.error();
      refused.emplace_back(&q, b.error());
      continue;
    }
    begun.push_back(Begun{&q, *b});
  }

  std::vector<ChunkWrite> chunks;
  for (const Begun& b : begun) {
    if (!b.begin.needs_entries) continue;
    const DispatchRecord& rec = *b.queued->record;
    for (uint32_t i = 0; i < rec.chunks.size(); ++i) {
      chunks.push_back(ChunkWrite{rec.identity.id, i, &rec.message, rec.chunks[i]});
    }
  }
  if (!chunks.empty()) {
    Status written = store.write_chunks(shard, epoch, chunks);
    if (!written.ok()) {
      if (classify(written.error()) != ErrorAction::kSkipRecord || records.size() > 1) return written.error();
      // A page of one: its entries are refused for good. The store lets go of the begun record.
      store.abandon_dispatch(shard, epoch, begun.front().queued->record->identity.id);
      refused.emplace_back(
          begun.front().queued,
          Error(written.error().code(), "its entries are refused: " + written.error().message()));
      begun.clear();
    }
  }

  // A recall entry removes the recalled SEND's body, and the text of the edits it names, from its
  // recipients' entries here, and from its former recipients' (members removed since, who get no entry of
  // it), before the recall's finish: a crash in between leaves the recall above the frontier, so the
  // replay redacts again (docs/adr/0129, 0157, 0160). Done also when the recall's own entries were known
  // written: it is idempotent.
  for (const Begun& b : begun) {
    const DispatchRecord& rec = *b.queued->record;
    const std::optional<RecallEntry> recall = recall_of(rec.message);
    if (!recall) continue;
    std::vector<UserId> users = rec.former_recipients;
    for (const auto& chunk : rec.chunks) users.insert(users.end(), chunk.begin(), chunk.end());
    QIM_RETURN_IF_ERROR(store.redact_message(shard, epoch, *recall, users));
  }

  // Before the frontier may pass a refused record (with this finish, or any later one), the quarantine
  // holds it durably. If it cannot, nothing is finished and the caller retries the page.
  for (const auto& [q, why] : refused) {
    QIM_RETURN_IF_ERROR(quarantine.put(shard, q->offset, why, q->raw));
    logger.error(
        "shard {}: quarantined the mailbox-log record at offset {}{}: {}", shard.value, q->offset.value,
        q->record.ok() ? " (dispatch " + q->record->identity.id.str() + ")" : std::string(), why.to_string());
    out.skipped++;
    out.quarantined.push_back(why.code());
  }
  if (begun.empty()) return out;

  // Chain the advances the way the store checks them: each record's expected_previous is the frontier as it
  // stands after the records before it in the page (a repeated observation leaves it where it was).
  std::vector<PageItem> items;
  MailboxSeq running = w;
  for (Begun& b : begun) {
    QIM_ASSIGN_OR_RETURN(MailboxSeq observed, compose(epoch, b.queued->offset));
    items.push_back(PageItem{b.queued->record->identity.id, uniform_advances(running, observed)});
    b.advances = b.begin.canonical && b.begin.seq > running;
    if (b.advances) running = observed;
  }
  if (as_page) {
    QIM_ASSIGN_OR_RETURN(PageOutcome page, store.finish_dispatch_page(shard, epoch, items));
    out.frontier = page.frontier;
    out.finished_as_page = true;
  } else {
    QIM_ASSIGN_OR_RETURN(FinishOutcome one,
                         store.finish_dispatch(shard, epoch, items[0].dispatch_id, items[0].advances));
    out.frontier = one.frontier;
  }
  for (const Begun& b : begun) {
    if (!b.advances || b.begin.seq > out.frontier) {
      out.repeated++;
      continue;
    }
    out.advanced++;
    const DispatchRecord& rec = *b.queued->record;
    for (const auto& chunk : rec.chunks) {
      for (const auto& user : chunk) out.visible.push_back(MailboxEntry{user, b.begin.seq, rec.message});
    }
  }
  return out;
}

}  // namespace qim
