#pragma once
// One step of a shard worker: materialise a run of consecutive mailbox-log records (a page) through the
// store, ADR-0022 section 4: begin each record, write all their entries with one write_chunks call, then
// move the frontier once with finish_dispatch_page (or finish_dispatch for a page of one). Either the whole
// page is finished or the frontier did not move and the caller retries from the page's first record.

#include <spdlog/logger.h>

#include <span>
#include <vector>

#include "core/mailbox_seq.h"
#include "core/sharding.h"
#include "mailbox/store.h"
#include "node/quarantine.h"

namespace qim {

// A mailbox-log record as the worker queues it: decoded, or the reason it could not be.
struct QueuedRecord {
  Offset offset;
  Result<DispatchRecord> record = Error(Errc::kCorruptEntry, "not decoded");
  std::string raw;  // the bytes as the log held them: what the quarantine keeps of a refused record
};

struct PageResult {
  MailboxSeq frontier;                // W after the page: the frontier the store returned
  uint32_t advanced = 0;              // records that moved the frontier
  uint32_t repeated = 0;              // repeated observations: zero advances
  uint32_t skipped = 0;               // records that cannot ever be materialised (now in the quarantine)
  std::vector<Errc> quarantined;      // why each of them was refused
  bool finished_as_page = false;      // finish_dispatch_page was used
  std::vector<MailboxEntry> visible;  // entries the frontier move made visible
};

// How a worker reacts to an error of the store.
enum class ErrorAction {
  kSkipRecord,  // the record itself is bad (undecodable, DispatchConflict, InvalidArgument): quarantine it,
                // count it, go on
  kRetry,  // transient or uncertain (Transport, Timeout, Io, WatermarkGap, Incomplete...): retry the page
  kFatal,  // the owner must stop (EpochAhead, Invariant, CorruptEntry, Config)
};
ErrorAction classify(const Error& error);

// Materialises `records` at `epoch` on top of frontier `w`. With `as_page` false the page must hold one
// record and is finished with finish_dispatch. A record that does not decode, or whose begin or entries
// are refused as bad (kSkipRecord), is left out of the finish, counted as skipped, and appended to the
// `quarantine` (durably) before the finish: the frontier never passes a refused record the quarantine
// does not hold. A failed quarantine append is returned as Io (retry; nothing was finished). With more
// than one record, a refused write_chunks is returned as InvalidArgument so the caller retries the
// records one by one to find it. Any other error is returned as is; then the frontier has not moved
// beyond what lane_watermarks says.
Result<PageResult> materialize_page(MailboxStore& store, Quarantine& quarantine, ShardId shard, Epoch epoch,
                                    MailboxSeq w, std::span<const QueuedRecord> records, bool as_page,
                                    spdlog::logger& logger);

}  // namespace qim
