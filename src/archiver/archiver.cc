#include "archiver/archiver.h"

#include "outbox/outbox_record.h"

namespace qim {

Archiver::Archiver(Log& outbox, HistoryStore& history, ArchiverOptions options)
    : history_(history),
      options_(std::move(options)),
      consumer_(outbox, options_.consumer,
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
  return ArchiverMetrics{messages_.load(), skipped_.load(), consumer_.positions()};
}

Status Archiver::handle(uint32_t partition, std::span<const LogRecord> batch) {
  uint64_t written = 0, skipped = 0;
  for (const LogRecord& rec : batch) {
    auto outbox = decode_outbox_record(rec.value);
    Status s = outbox.ok() ? history_.append(to_message(*outbox, message_id_of(partition, rec.offset)))
                           : Status(outbox.error());
    // An undecodable record or a message the store refuses will never do: skip it. Anything else (disk,
    // transport) may pass on a retry of the batch.
    if (!s.ok() && outbox.ok() && s.code() != Errc::kInvalidArgument) return s;
    if (!s.ok()) {
      consumer_.logger().warn("archiver: skipping outbox record {}:{}: {}", partition, rec.offset.value,
                              s.error().to_string());
      ++skipped;
      continue;
    }
    ++written;
  }
  if (options_.make_durable) QIM_RETURN_IF_ERROR(options_.make_durable());
  messages_ += written;
  skipped_ += skipped;
  return {};
}

}  // namespace qim
