#include "fanout/replay_horizon.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace qim {

namespace {

std::string utc(int64_t ms) {
  const std::chrono::sys_time<std::chrono::milliseconds> t{std::chrono::milliseconds(ms)};
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", std::chrono::floor<std::chrono::seconds>(t));
}

// The append time of the record at `offset` (which must be kept and below the end).
Result<int64_t> appended_at(Log& log, uint32_t partition, uint64_t offset) {
  QIM_ASSIGN_OR_RETURN(auto records, log.read(partition, Offset{offset}, 1, std::chrono::milliseconds(0)));
  if (records.empty() || records.front().offset.value != offset) {
    return Error(Errc::kInvariant, log.name() + " partition " + std::to_string(partition) +
                                       " returned no record at kept offset " + std::to_string(offset));
  }
  return records.front().timestamp_ms;
}

// The first offset in [lo, hi) appended after `after_ms`, hi if none (append times do not decrease).
Result<uint64_t> first_after(Log& log, uint32_t partition, uint64_t lo, uint64_t hi, int64_t after_ms) {
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    QIM_ASSIGN_OR_RETURN(int64_t t, appended_at(log, partition, mid));
    if (t > after_ms) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

// See the header: the records the repeated-sends filter compares `from` (appended at `at`) with must be
// kept, or too old to matter.
Status check_repeat_lookback(Log& outbox, uint32_t partition, Offset from, Offset start, Offset end,
                             int64_t at, const RepeatWindow& w, const std::string& where) {
  if (start.value == 0 || from.value - start.value >= w.records) return {};
  QIM_ASSIGN_OR_RETURN(int64_t oldest, appended_at(outbox, partition, start.value));
  if (at - oldest > w.ms) return {};
  const uint64_t by_count = std::min(end.value, start.value + w.records);
  QIM_ASSIGN_OR_RETURN(uint64_t earliest,
                       first_after(outbox, partition, from.value + 1, by_count, oldest + w.ms));
  const std::string next = earliest >= end.value
                               ? "no later record of the partition qualifies (nothing to replay)"
                               : "the earliest offset that may be replayed is " + std::to_string(earliest);
  return Error(Errc::kInvalidArgument,
               where + ": records before it were deleted by the Outbox retention (the oldest kept, offset " +
                   std::to_string(start.value) + ", was appended at " + utc(oldest) +
                   ", within the repeated-sends window of " + std::to_string(w.records) + " records and " +
                   std::to_string(w.ms) +
                   " ms), so a repeated SEND whose first copy is gone would be "
                   "dispatched again under its own id; " +
                   next);
}

}  // namespace

Status check_replay_horizon(Log& outbox, uint32_t partition, Offset from, const ReplayLimit& limit) {
  QIM_ASSIGN_OR_RETURN(Offset start, outbox.start_offset(partition));
  QIM_ASSIGN_OR_RETURN(Offset end, outbox.end_offset(partition));
  const std::string where = "outbox partition " + std::to_string(partition) + ": cannot replay from offset " +
                            std::to_string(from.value);
  if (from > end)
    return Error(Errc::kInvalidArgument, where + ": the partition ends at " + std::to_string(end.value));
  if (from < start) {
    return Error(Errc::kInvalidArgument,
                 where + ": records below offset " + std::to_string(start.value) +
                     " were deleted by the Outbox retention (QIM_OUTBOX_RETENTION_MS=" +
                     std::to_string(limit.retention_ms) + ")");
  }
  if (from == end) return {};
  const int64_t horizon = limit.horizon_ms();
  QIM_ASSIGN_OR_RETURN(int64_t at, appended_at(outbox, partition, from.value));
  if (at >= horizon) {
    if (!limit.repeats) return {};
    return check_repeat_lookback(outbox, partition, from, start, end, at, *limit.repeats, where);
  }
  // The first offset appended at or after the horizon: append times do not decrease along a partition.
  uint64_t lo = from.value + 1, hi = end.value;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    QIM_ASSIGN_OR_RETURN(int64_t t, appended_at(outbox, partition, mid));
    if (t >= horizon) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  const std::string earliest = lo == end.value
                                   ? "no record of the partition is that recent (nothing to replay)"
                                   : "the earliest offset that may be replayed is " + std::to_string(lo);
  return Error(Errc::kInvalidArgument,
               where + ": it was appended at " + utc(at) + ", before the retention horizon " + utc(horizon) +
                   " (now minus QIM_OUTBOX_RETENTION_MS=" + std::to_string(limit.retention_ms) +
                   " ms; older records may outlive their 31-day dispatch identities); " + earliest);
}

}  // namespace qim
