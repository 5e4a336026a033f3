#include "fanout/replay_horizon.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

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
  if (at >= horizon) return {};
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
