#include "archiver/archiver.h"

#include <spdlog/sinks/null_sink.h>

#include "outbox/outbox_record.h"

namespace qim {

Archiver::Archiver(Log& outbox, HistoryStore& history, ArchiverOptions options)
    : outbox_(outbox), history_(history), options_(std::move(options)) {
  if (!options_.logger) {
    options_.logger =
        std::make_shared<spdlog::logger>("archiver", std::make_shared<spdlog::sinks::null_sink_mt>());
  }
  if (options_.partitions.empty()) {
    for (uint32_t p = 0; p < outbox_.partition_count(); ++p) options_.partitions.push_back(p);
  }
}

Archiver::~Archiver() {
  stop();
}

Status Archiver::start() {
  ConsumerOptions o;
  o.group = options_.group;
  o.partitions = options_.partitions;
  o.batch_max = options_.batch_max;
  o.poll_wait = options_.poll_wait;
  o.logger = options_.logger;
  consumer_ = std::make_unique<LogConsumer>(
      outbox_, std::move(o),
      [this](uint32_t p, std::span<const LogRecord> batch) { return handle(p, batch); });
  return consumer_->start();
}

Status Archiver::drain(std::chrono::milliseconds limit, const std::function<void(uint64_t)>& progress) {
  if (!consumer_) return {};
  return consumer_->drain(limit, progress);
}

void Archiver::stop() {
  if (consumer_) consumer_->stop();
}

ArchiverMetrics Archiver::metrics() const {
  ArchiverMetrics m{messages_.load(), skipped_.load(), {}};
  if (consumer_) m.positions = consumer_->positions();
  return m;
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
      options_.logger->warn("archiver: skipping outbox record {}:{}: {}", partition, rec.offset.value,
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
