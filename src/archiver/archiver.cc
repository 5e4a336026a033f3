#include "archiver/archiver.h"

#include "outbox/outbox_record.h"

namespace qim {

namespace {

// The history rows are written without a sync and made durable once per commit of the Outbox position
// (decision 36): a power loss before the sync loses rows whose position was not committed either, so the
// replay writes them again. A sync per batch cost one fdatasync per message at low rates.
ConsumerOptions consumer_options(const ArchiverOptions& options) {
  ConsumerOptions o = options.consumer;
  if (options.make_durable)
    o.before_commit = [durable = options.make_durable](uint32_t) { return durable(); };
  return o;
}

}  // namespace

Archiver::Archiver(Log& outbox, HistoryStore& history, ArchiverOptions options)
    : history_(history),
      options_(std::move(options)),
      repeats_(outbox, options_.repeats),
      consumer_(outbox, consumer_options(options_),
                [this](uint32_t p, std::span<const LogRecord> batch) { return handle(p, batch); }) {}

Archiver::~Archiver() {
  stop();
}

Status Archiver::start() {
  return consumer_.start();
}

Status Archiver::drain(std::chrono::milliseconds limit, const std::function<void(uint64_t)>& progress) {
  return consumer_.drain(limit, progress);
}

void Archiver::stop() {
  consumer_.stop();
}

ArchiverMetrics Archiver::metrics() const {
  return ArchiverMetrics{messages_.load(), skipped_.load(), repeated_.load(), consumer_.positions()};
}

Status Archiver::handle(uint32_t partition, std::span<const LogRecord> batch) {
  // An undecodable record or a message the store would refuse will never do: skip it (logged). The rest
  // go to the store together, so a remote store overlaps their round trips; a failure there (disk,
  // transport) fails the batch, which the consumer retries from the same position.
  std::vector<Message> messages;
  messages.reserve(batch.size());
  uint64_t skipped = 0, repeated = 0;
  for (const LogRecord& rec : batch) {
    auto outbox = decode_outbox_record(rec.value);
    QIM_ASSIGN_OR_RETURN(bool repeat,
                         repeats_.is_repeat(partition, rec.offset, outbox.ok() ? &*outbox : nullptr));
    if (repeat) {
      ++repeated;  // fanout logs it
      continue;
    }
    // A membership change is no chat message: its system entry is in the members' mailboxes (fanout
    // decides whether it applied), not in HISTORY.
    if (outbox.ok() && outbox->group_op) continue;
    Status s = outbox.ok() ? Status() : Status(outbox.error());
    if (outbox.ok()) {
      messages.push_back(to_message(*outbox, message_id_of(partition, rec.offset)));
      s = validate_history_message(messages.back());
      if (!s.ok()) messages.pop_back();
    }
    if (!s.ok()) {
      consumer_.logger().warn("archiver: skipping outbox record {}:{}: {}", partition, rec.offset.value,
                              s.error().to_string());
      ++skipped;
    }
  }
  if (!messages.empty()) QIM_RETURN_IF_ERROR(history_.append_all(messages));
  messages_ += messages.size();
  skipped_ += skipped;
  repeated_ += repeated;
  return {};
}

}  // namespace qim
