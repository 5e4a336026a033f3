#pragma once
// qim-archiver: reads the Outbox in its own consumer group and writes each message's history rows. The
// message id is derived from the Outbox position, so a replayed batch rewrites the same rows (idempotent).
// The position is committed only after the rows are written and, if a `make_durable` hook is given, synced:
// the hook runs before each commit of a position (ConsumerOptions::before_commit), not after each batch.

#include <spdlog/logger.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "archiver/history_store.h"
#include "lifecycle/message_state_store.h"
#include "log/consumer.h"
#include "log/log.h"
#include "outbox/repeated_sends.h"

namespace qim {

inline constexpr const char* kArchiverGroup = "qim-archiver";

struct ArchiverOptions {
  // How the Outbox is consumed: group, partitions (empty: all), batch size, commit interval, logger.
  ConsumerOptions consumer{.group = kArchiverGroup, .poll_wait = std::chrono::milliseconds(100)};
  std::function<Status()> make_durable;  // called before each commit of a position (about once a second)
  RepeatWindow repeats;                  // repeated SENDs are not archived (outbox/repeated_sends.h)
  // EDIT and RECALL (docs/adr/0090): the decisions fanout recorded. An applied edit rewrites the message's
  // row with the new body; an applied recall rewrites it with no body (the tombstone). A SEND below the
  // partition's watermark (an event may be about it: a replay) is written in its current state: a recalled
  // one as its tombstone, an edited one not at all (its last edit writes it). Null: events are skipped.
  MessageStateStore* messages = nullptr;
  // Optional: called with a message as it was (its body) when the archiver finds it recalled: at the
  // applied recall, or at the SEND itself when the recall was decided before the archiver read it (it
  // lags fanout; a replay). Its attachments' objects are deleted there (attachments/attachment_service.h
  // delete_objects_of). Must be idempotent: a replay or a retried batch calls it again. An error fails the
  // batch, which is retried.
  std::function<Status(const Message& original)> on_recall;
};

struct ArchiverMetrics {
  uint64_t messages = 0;  // messages written (replays included)
  uint64_t skipped = 0;   // Outbox records that are not messages (logged)
  uint64_t repeats = 0;   // Outbox records that repeat an earlier SEND, not archived (replays included)
  uint64_t events = 0;    // applied EDIT/RECALL records written to history (replays included)
  std::vector<ConsumerPosition> positions;
};

class Archiver {
 public:
  Archiver(Log& outbox, HistoryStore& history, ArchiverOptions options);
  ~Archiver();

  Status start();
  Status drain(std::chrono::milliseconds limit, const std::function<void(uint64_t remaining)>& progress = {});
  void stop();
  ArchiverMetrics metrics() const;
  // Archives `partition` again from `next` (an operator's replay; the rows it writes are the ones already
  // there: decision 90). InvalidArgument for a partition this archiver does not read.
  Status replay_from(uint32_t partition, Offset next);

 private:
  Status handle(uint32_t partition, std::span<const LogRecord> batch);
  // The watermark of `partition` as last read, read again from the store if it is not above `offset`.
  Result<uint64_t> watermark(uint32_t partition, uint64_t offset, bool refresh);

  // The reply_to of the message `id` (docs/adr/0125): the SEND's record's, read from the Outbox (none when
  // it is no reply or no longer kept). An edit or recall rewrites the row from the state, which holds none.
  Result<std::optional<MessageId>> reply_to_of(MessageId id);

  Log& outbox_;
  HistoryStore& history_;
  ArchiverOptions options_;
  OutboxRepeatFilter repeats_;
  LogConsumer consumer_;
  std::atomic<uint64_t> messages_{0}, skipped_{0}, repeated_{0}, events_{0};
  std::mutex mu_;
  std::unordered_map<uint32_t, uint64_t> watermarks_;  // per partition, under mu_
};

}  // namespace qim
