#pragma once
// The retention horizon of a fanout replay (ADR-0022 section 3). A replay re-appends dispatch records
// whose first observation may be long gone; it converges only while the dispatch identities it meets are
// alive (31 days). The Outbox keeps records for QIM_OUTBOX_RETENTION_MS (checked at start-up to stay, with
// the dispatch retention, below 31 days), so a replay is allowed only from records appended within that
// period: records older than it may have outlived their identities.

#include <cstdint>

#include "core/status.h"
#include "log/log.h"

namespace qim {

struct ReplayLimit {
  int64_t now_ms = 0;        // the instance's clock
  int64_t retention_ms = 0;  // QIM_OUTBOX_RETENTION_MS
  int64_t horizon_ms() const { return now_ms - retention_ms; }
};

// Ok if a replay of `partition` from `from` reads only records appended at or after the horizon (also
// when from is the end: nothing to replay). InvalidArgument naming the horizon and the earliest offset
// that may be replayed when the record at `from` is older, when `from` is below the log's start (deleted
// by retention) or beyond its end; the log's error if it cannot be read. Assumes append times do not
// decrease along a partition (one clock appends them), so it reads O(log n) single records.
Status check_replay_horizon(Log& outbox, uint32_t partition, Offset from, const ReplayLimit& limit);

}  // namespace qim
