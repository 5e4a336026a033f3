#include "node/quarantine.h"

#include "core/bytes.h"

namespace qim {

namespace {

constexpr uint8_t kVersion = 1;        // a mailbox-log record: byte-identical to earlier builds
constexpr uint8_t kSourceVersion = 2;  // then the source, for an Outbox record
// Room for the fields around the raw bytes, so a record at the mailbox log's size bound still fits.
constexpr size_t kHeaderRoom = 8 * 1024;

}  // namespace

std::string_view quarantine_source_name(QuarantineSource source) {
  return source == QuarantineSource::kOutbox ? "outbox" : "mailbox";
}

std::string encode_quarantined(const QuarantinedRecord& r) {
  ByteWriter w;
  if (r.source == QuarantineSource::kMailboxLog) {
    w.u8(kVersion);
  } else {
    w.u8(kSourceVersion);
    w.u8(static_cast<uint8_t>(r.source));
  }
  w.u32(r.shard.value);
  w.u64(r.offset.value);
  w.u8(static_cast<uint8_t>(r.code));
  w.str(r.message);
  w.i64(r.time_ms);
  w.u64(r.raw_size);
  w.str(r.raw);
  return w.take();
}

Result<QuarantinedRecord> decode_quarantined(std::string_view bytes) {
  ByteReader in(bytes, "quarantined record");
  QIM_ASSIGN_OR_RETURN(uint8_t version, in.u8("version"));
  if (version != kVersion && version != kSourceVersion) {
    return Error(Errc::kCorruptEntry, "quarantined record: unknown version " + std::to_string(version));
  }
  QuarantinedRecord r;
  if (version == kSourceVersion) {
    QIM_ASSIGN_OR_RETURN(uint8_t source, in.u8("source"));
    if (source > static_cast<uint8_t>(QuarantineSource::kOutbox)) {
      return Error(Errc::kCorruptEntry, "quarantined record: unknown source " + std::to_string(source));
    }
    r.source = static_cast<QuarantineSource>(source);
  }
  QIM_ASSIGN_OR_RETURN(r.shard.value, in.u32("shard"));
  QIM_ASSIGN_OR_RETURN(r.offset.value, in.u64("offset"));
  QIM_ASSIGN_OR_RETURN(uint8_t code, in.u8("code"));
  if (code > static_cast<uint8_t>(Errc::kConfig)) {
    return Error(Errc::kCorruptEntry, "quarantined record: unknown error code " + std::to_string(code));
  }
  r.code = static_cast<Errc>(code);
  QIM_ASSIGN_OR_RETURN(r.message, in.str("message", 64 * 1024));
  QIM_ASSIGN_OR_RETURN(r.time_ms, in.i64("time"));
  QIM_ASSIGN_OR_RETURN(r.raw_size, in.u64("raw size"));
  QIM_ASSIGN_OR_RETURN(r.raw, in.str("raw", bytes.size()));
  QIM_RETURN_IF_ERROR(in.finish());
  return r;
}

Status Quarantine::put(ShardId shard, Offset offset, const Error& why, std::string_view raw) {
  return put_record(QuarantineSource::kMailboxLog, shard.value, offset, why, raw);
}

Status Quarantine::put_outbox(uint32_t partition, Offset offset, const Error& why, std::string_view raw) {
  return put_record(QuarantineSource::kOutbox, partition, offset, why, raw);
}

Status Quarantine::put_record(QuarantineSource source, uint32_t partition, Offset offset, const Error& why,
                              std::string_view raw) {
  QuarantinedRecord r;
  r.source = source;
  r.shard = ShardId{partition};
  r.offset = offset;
  r.code = why.code();
  r.message = why.message().substr(0, 4096);
  r.time_ms = clock_->now_ms();
  r.raw_size = raw.size();
  // The raw record is kept whole unless it would push the quarantine record over the log's bound.
  const size_t room = log_.max_record_bytes() > kHeaderRoom ? log_.max_record_bytes() - kHeaderRoom : 0;
  r.raw = std::string(raw.substr(0, room));
  const bool outbox = source == QuarantineSource::kOutbox;
  std::string key = outbox ? "outbox-" + std::to_string(partition) : std::to_string(partition);
  auto appended = log_.append_sync(partition % log_.partition_count(), std::move(key), encode_quarantined(r));
  if (!appended.ok()) {
    return Error(Errc::kIo, "quarantine of " + std::string(outbox ? "outbox partition " : "shard ") +
                                std::to_string(partition) + " record at offset " +
                                std::to_string(offset.value) + " failed: " + appended.error().to_string());
  }
  return {};
}

Result<std::vector<QuarantineEntry>> read_quarantine(Log& log, Offset from, size_t max) {
  std::vector<QuarantineEntry> out;
  for (uint32_t p = 0; p < log.partition_count() && out.size() < max; ++p) {
    Offset next = from;
    while (out.size() < max) {
      QIM_ASSIGN_OR_RETURN(auto records, log.read(p, next, std::min<size_t>(max - out.size(), 512),
                                                  std::chrono::milliseconds(0)));
      if (records.empty()) break;
      for (auto& rec : records) {
        QIM_ASSIGN_OR_RETURN(QuarantinedRecord r, decode_quarantined(rec.value));
        out.push_back(QuarantineEntry{rec.offset, std::move(r)});
        next = Offset{rec.offset.value + 1};
      }
    }
  }
  return out;
}

}  // namespace qim
