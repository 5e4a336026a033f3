#pragma once
// Fanout: reads the Outbox and appends, per message, one dispatch record to the mailbox-log partition of
// each shard holding a recipient. It commits its Outbox position only after those appends are durable, so
// after a crash it appends some records again: the same ids and bytes, which the store treats as repeated
// observations. A record it cannot use for good (undecodable, unknown conversation kind, its group's rows
// do not decode, a dispatch record of it the mailbox log refuses) is quarantined (node/quarantine.h),
// durably, before the position passes it, instead of stalling the partition behind it; a transient error
// (the store or the log unavailable) fails the batch, which is retried (docs/adr/0053).

#include <spdlog/logger.h>

#include <atomic>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/sharding.h"
#include "fanout/group_recipients.h"
#include "fanout/message_events.h"
#include "fanout/replay_horizon.h"
#include "log/consumer.h"
#include "log/log.h"
#include "node/quarantine.h"
#include "outbox/repeated_sends.h"

namespace qim {

inline constexpr const char* kFanoutGroup = "qim-fanout";

struct FanoutOptions {
  // How the Outbox is consumed: group, partitions (empty: all), batch size, commit interval, logger.
  ConsumerOptions consumer{.group = kFanoutGroup, .poll_wait = std::chrono::milliseconds(100)};
  uint32_t chunk_entries = 256;  // QIM_FANOUT_CHUNK_ENTRIES: recipients per chunk
  // QIM_OUTBOX_RETENTION_MS: a replay from a record older than this is refused (fanout/replay_horizon.h).
  // nullopt: no horizon (tests only).
  std::optional<int64_t> outbox_retention_ms;
  std::shared_ptr<const Clock> clock;  // for the horizon; the system clock if null
  RepeatWindow repeats;                // repeated SENDs are not dispatched (outbox/repeated_sends.h)
  // Group membership (fanout/group_recipients.h); null: records of group conversations are skipped.
  GroupStore* groups = nullptr;
  uint32_t group_max_members = kDefaultGroupMaxMembers;  // QIM_GROUP_MAX_MEMBERS
  // EDIT and RECALL (fanout/message_events.h): where each decision is kept, and the windows. Null: event
  // records are not dispatched (logged and skipped).
  MessageStateStore* messages = nullptr;
  LifecyclePolicy lifecycle;
  // Where Outbox records fanout cannot use for good go (the quarantine log, node/quarantine.h). Null
  // (tests only): such a record is skipped with a log line, as before, and a permanent error of the group
  // store or the mailbox log fails the batch like a transient one.
  Log* quarantine = nullptr;
};

struct FanoutMetrics {
  uint64_t records = 0;     // Outbox records turned into dispatch records
  uint64_t dispatches = 0;  // dispatch records appended (replays included)
  uint64_t skipped = 0;     // Outbox records that could not be used
  uint64_t repeats = 0;     // Outbox records that repeat an earlier SEND, not dispatched (replays included)
  uint64_t group_ops = 0;   // group membership changes read (applied or refused; replays included)
  uint64_t group_refused = 0;   // group records not dispatched: refused ops, messages of non-members
  uint64_t group_loads = 0;     // group store loads (one per group the cache did not hold)
  uint64_t quarantined = 0;     // Outbox records appended to the quarantine (replays included)
  uint64_t events = 0;          // EDIT/RECALL records read (replays included)
  uint64_t events_refused = 0;  // of which refused (or of a non-member, or with no message store)
  std::vector<ConsumerPosition> positions;
};

class Fanout {
 public:
  // `mailbox_log` must have one partition per shard.
  Fanout(Log& outbox, Log& mailbox_log, ShardMap shards, FanoutOptions options);
  ~Fanout();

  // Config if the mailbox log's partition count differs from the shard count; otherwise as
  // LogConsumer::start.
  Status start();
  // Handles every Outbox record present now, then stops (clean shutdown). Timeout past `limit`.
  Status drain(std::chrono::milliseconds limit, const std::function<void(uint64_t remaining)>& progress = {});
  void stop();
  // Replays a running fanout from `next` (earlier) on one Outbox partition. InvalidArgument for a `next`
  // beyond the end, below the start, or before the retention horizon (check_replay, nothing changed).
  Status replay_from(uint32_t partition, Offset next);
  // What replay_from checks, without replaying (so a replay of several partitions is all or nothing).
  Status check_replay(uint32_t partition, Offset next);
  FanoutMetrics metrics() const;

 private:
  Status handle(uint32_t partition, std::span<const LogRecord> batch);
  // Whether the SEND at `offset` was recalled (the message state says so); `watermark` caches the state's
  // watermark of `partition` for the batch. The store's errors.
  Result<bool> recalled_send(uint32_t partition, Offset offset, std::optional<uint64_t>& watermark);
  // The message state's watermark of a partition as known at the end of its last batch, kept while batches
  // continue each other without an event (docs/adr/0168): a plain SEND's batch then reads nothing.
  struct KnownWatermark {
    uint64_t next = 0;   // the offset the next batch must start at for `value` to hold
    uint64_t value = 0;  // the watermark: only fanout raises it, and only for event records
  };
  // Appends the Outbox record to the quarantine (durably) and logs it; the quarantine's error otherwise.
  Status quarantine(uint32_t partition, const LogRecord& rec, const Error& why);
  spdlog::logger& logger() const { return consumer_.logger(); }

  Log& outbox_;
  Log& mailbox_log_;
  ShardMap shards_;
  FanoutOptions options_;
  OutboxRepeatFilter repeats_;
  std::unique_ptr<GroupRecipients> groups_;
  std::unique_ptr<Quarantine> quarantine_;
  std::unique_ptr<MessageEvents> events_;
  // By Outbox partition; each element used only by the thread consuming that partition (as repeats_).
  std::vector<std::optional<KnownWatermark>> known_watermarks_;
  LogConsumer consumer_;
  std::atomic<uint64_t> records_{0}, dispatches_{0}, skipped_{0}, repeated_{0}, group_ops_{0},
      group_refused_{0}, quarantined_{0}, events_read_{0}, events_refused_{0};
};

// For a stopped instance: moves the fanout group's committed position of each of `partitions` (empty =
// all) of the Outbox back to `next` (capped at each partition's end), so the next start replays from there.
// Returns the positions written. InvalidArgument for an unknown partition, or (with a limit) for a
// partition whose position would fall before the retention horizon: then no position is written.
Result<std::vector<ConsumerPosition>> rewind_fanout(Log& outbox, std::span<const uint32_t> partitions,
                                                    Offset next, const std::string& group = kFanoutGroup,
                                                    std::optional<ReplayLimit> limit = std::nullopt);

}  // namespace qim
