#pragma once
// Repeated SENDs in the Outbox, recognised by what the log holds, so fanout and the archiver drop them the
// same way however they consume it.
//
// Two Outbox records can carry one SEND: a retry whose first attempt was stored although its gateway
// could not say so (a Kafka append that timed out after reaching the broker; a gateway that died between
// its append and recording the outcome in the shared idempotency table, decision 20). Both land in the
// conversation's partition. The rule, on log content alone: the record at offset o of a partition repeats
// an earlier one when a record in [o - window_records, o) of that partition has the same sender,
// non-empty client_msg_id, conversation and body, and a server time at most window_ms earlier. A repeat is
// never dispatched or archived, so the message shows once (as the first record's id); the retry's
// SEND_ACK may name the second record's id (docs/protocol.md).
//
// Because the rule looks back a bounded number of records, a consumer that starts (or restarts, or
// replays) at any offset decides exactly as one that read the partition from the beginning, once it has
// been primed with the records before its start: `OutboxRepeatFilter` does that by itself.

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "log/log.h"
#include "outbox/outbox_record.h"

namespace qim {

struct RepeatWindow {
  uint64_t records = 12'500;  // per partition: the gateway's 200,000 keys over 16 partitions
  int64_t ms = 86'400'000;    // the gateway's dedup window (24 h)
};

// The window of one partition, fed in offset order. Not thread-safe.
class RepeatedSends {
 public:
  explicit RepeatedSends(RepeatWindow window) : window_(window) {}
  // Whether `r` at `offset` repeats a record already seen within the window; then remembers it. Offsets
  // must increase from call to call (reset() otherwise).
  bool check_and_add(Offset offset, const OutboxRecord& r);
  void reset();
  size_t size() const { return order_.size(); }

 private:
  struct Seen {
    uint64_t offset;
    uint64_t content;  // hash of conversation and body
    int64_t server_time_ms;
  };
  void evict_before(uint64_t offset);

  RepeatWindow window_;
  std::unordered_map<uint64_t, std::vector<Seen>> by_key_;  // hash of (sender, client_msg_id)
  std::deque<std::pair<uint64_t, uint64_t>> order_;         // (offset, key hash), oldest first
};

// One RepeatedSends per partition of an Outbox, primed from the log whenever a batch does not continue
// the previous one (the first batch, a seek, a replay, a batch handed over again after a failure).
// Thread safety: each partition's state is used only by the thread that consumes that partition (as
// LogConsumer's threads do); different partitions may be used concurrently.
class OutboxRepeatFilter {
 public:
  OutboxRepeatFilter(Log& outbox, RepeatWindow window);
  // Whether the decoded record `r` at `offset` of `partition` repeats an earlier SEND; call it for every
  // record in offset order, with `r` null for one that does not decode (never a repeat). InvalidArgument
  // for an unknown partition; the log's error if priming cannot read it (the caller retries the batch).
  // Records that do not decode while priming are ignored (they are no SEND).
  Result<bool> is_repeat(uint32_t partition, Offset offset, const OutboxRecord* r);

 private:
  struct Partition {
    RepeatedSends seen;
    std::optional<uint64_t> next;  // the offset that continues what `seen` holds
  };
  Status prime(uint32_t partition, Partition& state, uint64_t start);

  Log& outbox_;
  RepeatWindow window_;
  std::vector<Partition> partitions_;
};

}  // namespace qim
