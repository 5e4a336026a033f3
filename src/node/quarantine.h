#pragma once
// The quarantine (docs/adr/0011-refused-records-quarantined.md): a mailbox-log record the store refuses for
// good (an undecodable record, DispatchConflict, InvalidArgument) is appended here, durably, before the
// shard's frontier may pass it. Fanout does the same with an Outbox record it cannot use for good (it does
// not decode, its group's rows do not, a dispatch record of it cannot be appended) before its position
// passes it (docs/adr/0053-fanout-splits-and-quarantines.md). Nothing is skipped silently: an operator
// lists and inspects what was refused with `qim quarantine list|show`. The quarantine is a Log (in `qim up`
// the embedded log `quarantine-log` under the data directory; on Kafka a topic), one partition, keyed by
// shard (or "outbox-<partition>").

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/mailbox_seq.h"
#include "core/sharding.h"
#include "core/status.h"
#include "log/log.h"

namespace qim {

inline constexpr const char* kQuarantineLogName = "quarantine";
inline constexpr uint32_t kQuarantinePartitions = 1;

// Which log a quarantined record was read from.
enum class QuarantineSource : uint8_t {
  kMailboxLog = 0,  // refused by the MailboxNode: `shard` is its mailbox-log partition
  kOutbox = 1,      // refused by fanout: `shard` holds its Outbox partition
};
std::string_view quarantine_source_name(QuarantineSource source);  // "mailbox", "outbox"

struct QuarantinedRecord {
  QuarantineSource source = QuarantineSource::kMailboxLog;
  ShardId shard;                       // the partition of the source log (for the mailbox log, the shard)
  Offset offset;                       // the record's offset on that partition
  Errc code = Errc::kInvalidArgument;  // why it was refused
  std::string message;                 // the refusal, as the store or the decoder said it
  int64_t time_ms = 0;                 // when it was quarantined
  uint64_t raw_size = 0;  // the record's size; `raw` holds all of it unless it was over the bound
  std::string raw;        // the record's bytes as the source log held them
};

// Binary form on the quarantine log (version 1 for a mailbox-log record, as before; version 2, with the
// source, for an Outbox record); decoding never trusts its input (CorruptEntry naming the field).
std::string encode_quarantined(const QuarantinedRecord& r);
Result<QuarantinedRecord> decode_quarantined(std::string_view bytes);

// The writing side, used by shard workers and fanout. Thread-safe (the Log is).
class Quarantine {
 public:
  Quarantine(Log& log, std::shared_ptr<const Clock> clock) : log_(log), clock_(std::move(clock)) {}

  // Appends the refused record and returns once the append is durable. Io naming the record when the log
  // refuses or fails: the caller must then not pass the record (retry later).
  Status put(ShardId shard, Offset offset, const Error& why, std::string_view raw);
  // The same for the Outbox record at (partition, offset) fanout could not use.
  Status put_outbox(uint32_t partition, Offset offset, const Error& why, std::string_view raw);

 private:
  Status put_record(QuarantineSource source, uint32_t partition, Offset offset, const Error& why,
                    std::string_view raw);

  Log& log_;
  std::shared_ptr<const Clock> clock_;
};

// Every quarantined record with its position on the quarantine log, oldest first, at most `max`.
struct QuarantineEntry {
  Offset position;  // where it is on the quarantine log: what `qim quarantine show` takes
  QuarantinedRecord record;
};
Result<std::vector<QuarantineEntry>> read_quarantine(Log& log, Offset from, size_t max);

}  // namespace qim
