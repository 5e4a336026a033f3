#pragma once
// The retention horizon of a fanout replay (ADR-0022 section 3). A replay re-appends dispatch records
// whose first observation may be long gone; it converges only while the dispatch identities it meets are
// alive (31 days). The Outbox keeps records for QIM_OUTBOX_RETENTION_MS (checked at start-up to stay, with
// the dispatch retention, below 31 days), so a replay is allowed only from records appended within that
// period: records older than it may have outlived their identities.
//
// A replay must also decide repeated SENDs as the first pass did (outbox/repeated_sends.h): the filter
// compares each record with the records before it, up to `repeats.records` back and `repeats.ms` earlier.
// Where retention deleted some of those, a replay starting just after the horizon would not see the first
// copy of a repeated pair and would dispatch the second under its own id (the message shown twice, with
// two ids). So with `repeats` set a replay is allowed only from where that look-back is whole: nothing
// was deleted, or the kept records reach `repeats.records` back, or the oldest kept record is more than
// `repeats.ms` older (everything deleted is older still: too old to be repeated).

#include <cstdint>
#include <optional>

#include "core/status.h"
#include "log/log.h"
#include "outbox/repeated_sends.h"

namespace qim {

struct ReplayLimit {
  int64_t now_ms = 0;        // the instance's clock
  int64_t retention_ms = 0;  // QIM_OUTBOX_RETENTION_MS
  // The repeated-sends window of the consumer that replays (fanout's); none: not checked.
  std::optional<RepeatWindow> repeats = std::nullopt;
  int64_t horizon_ms() const { return now_ms - retention_ms; }
};

// Ok if a replay of `partition` from `from` reads only records appended at or after the horizon (also
// when from is the end: nothing to replay). InvalidArgument naming the horizon and the earliest offset
// that may be replayed when the record at `from` is older, when `from` is below the log's start (deleted
// by retention) or beyond its end, or (with `repeats`) when the repeated-sends look-back of `from` reaches
// deleted records; the log's error if it cannot be read. Assumes append times do not
// decrease along a partition (one clock appends them), so it reads O(log n) single records.
Status check_replay_horizon(Log& outbox, uint32_t partition, Offset from, const ReplayLimit& limit);

}  // namespace qim
