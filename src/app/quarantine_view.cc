#include "app/quarantine_view.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <ctime>
#include <map>
#include <tuple>

#include "gateway/protocol/json_writer.h"
#include "mailbox/message_codec.h"
#include "outbox/outbox_record.h"

namespace qim {

namespace {

std::string utc(int64_t ms) {
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03}Z", tm, ms % 1000);
}

std::string hex(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

struct Listed {
  const QuarantineEntry* first;
  uint64_t times = 0;
};

// The first appearance of each (log, partition, offset), in quarantine-log order.
std::vector<Listed> unique_records(const std::vector<QuarantineEntry>& entries) {
  std::vector<Listed> out;
  std::map<std::tuple<QuarantineSource, uint32_t, uint64_t>, size_t> seen;
  for (const auto& e : entries) {
    auto [it, fresh] =
        seen.try_emplace({e.record.source, e.record.shard.value, e.record.offset.value}, out.size());
    if (fresh) out.push_back(Listed{&e, 0});
    out[it->second].times++;
  }
  return out;
}

void record_fields(JsonWriter& w, const QuarantineEntry& e) {
  w.key("position").uint64(e.position.value);
  w.field("log", quarantine_source_name(e.record.source));
  // A mailbox-log record names its shard, an Outbox record its Outbox partition.
  w.key(e.record.source == QuarantineSource::kOutbox ? "partition" : "shard").uint64(e.record.shard.value);
  w.key("offset").uint64(e.record.offset.value);
  w.field("reason", errc_name(e.record.code));
  w.field("message", e.record.message);
  w.key("time_ms").int64(e.record.time_ms);
  w.field("time", utc(e.record.time_ms));
  w.key("bytes").uint64(e.record.raw_size);
}

// An Outbox record fanout quarantined: its message id (fixed by its position), and what it says when it
// decodes. `qim replay-fanout` dispatches it again once what refused it is repaired (docs/operations.md).
std::string show_outbox_record(const QuarantineEntry& e, bool json) {
  const QuarantinedRecord& r = e.record;
  const MessageId id = message_id_of(r.shard.value, r.offset);
  auto decoded = decode_outbox_record(r.raw);
  if (json) {
    JsonWriter w;
    w.begin_object();
    record_fields(w, e);
    w.field("raw_hex", hex(r.raw));
    w.field("raw_complete", r.raw.size() == r.raw_size);
    w.key("message_id").uint64_as_string(id.value);
    if (decoded.ok()) {
      w.field("conversation", decoded->conversation.str());
      w.field("sender", decoded->sender.str());
      w.field("client_msg_id", decoded->client_msg_id);
    }
    w.end_object();
    return w.take() + "\n";
  }
  std::string out;
  out += fmt::format("position      {}\noutbox        partition {} offset {}\nreason        {}\n",
                     e.position.value, r.shard.value, r.offset.value, errc_name(r.code));
  out += fmt::format("message       {}\nquarantined   {}\nbytes         {}{}\n", r.message, utc(r.time_ms),
                     r.raw_size, r.raw.size() == r.raw_size ? "" : fmt::format(" ({} kept)", r.raw.size()));
  if (decoded.ok()) {
    out += fmt::format("record        message {} in {} from {} ({})\n", id.value, decoded->conversation.str(),
                       decoded->sender.str(), decoded->client_msg_id);
  } else {
    out += fmt::format("record        does not decode: {}\n", decoded.error().message());
  }
  out += "raw (hex)     " + hex(r.raw) + "\n";
  return out;
}

}  // namespace

std::string render_quarantine_list(const std::vector<QuarantineEntry>& entries, bool json) {
  const auto listed = unique_records(entries);
  if (json) {
    JsonWriter w;
    w.begin_object().key("records").begin_array();
    for (const auto& l : listed) {
      w.begin_object();
      record_fields(w, *l.first);
      w.key("times").uint64(l.times);
      w.end_object();
    }
    w.end_array().end_object();
    return w.take() + "\n";
  }
  if (listed.empty()) return "the quarantine is empty\n";
  // "shard" is the mailbox-log partition (the shard) or, for a record of log "outbox", its Outbox partition.
  std::string out = fmt::format("{:>8} {:<7} {:>5} {:>10}  {:<17} {:<24} {:>7} {:>5}  {}\n", "position",
                                "log", "shard", "offset", "reason", "time", "bytes", "times", "message");
  for (const auto& l : listed) {
    const QuarantinedRecord& r = l.first->record;
    out += fmt::format("{:>8} {:<7} {:>5} {:>10}  {:<17} {:<24} {:>7} {:>5}  {}\n", l.first->position.value,
                       quarantine_source_name(r.source), r.shard.value, r.offset.value, errc_name(r.code),
                       utc(r.time_ms), r.raw_size, l.times, r.message.substr(0, 120));
  }
  return out;
}

Result<std::string> render_quarantine_show(const std::vector<QuarantineEntry>& entries, uint64_t position,
                                           bool json) {
  const QuarantineEntry* found = nullptr;
  for (const auto& e : entries) {
    if (e.position.value == position) found = &e;
  }
  if (found == nullptr) {
    return Error(Errc::kNotFound, "no quarantined record at position " + std::to_string(position) +
                                      " (`qim quarantine list` shows the positions)");
  }
  const QuarantinedRecord& r = found->record;
  if (r.source == QuarantineSource::kOutbox) return show_outbox_record(*found, json);
  auto decoded = decode_dispatch_record(r.raw);
  if (json) {
    JsonWriter w;
    w.begin_object();
    record_fields(w, *found);
    w.field("raw_hex", hex(r.raw));
    w.field("raw_complete", r.raw.size() == r.raw_size);
    if (decoded.ok()) {
      w.field("dispatch_id", decoded->identity.id.str());
      w.key("message_id").uint64_as_string(decoded->message.id.value);
      w.field("conversation", decoded->message.conversation.str());
      w.field("sender", decoded->message.sender.str());
    }
    w.end_object();
    return w.take() + "\n";
  }
  std::string out;
  out += fmt::format("position      {}\nshard         {}\nmailbox log   offset {}\nreason        {}\n",
                     found->position.value, r.shard.value, r.offset.value, errc_name(r.code));
  out += fmt::format("message       {}\nquarantined   {}\nbytes         {}{}\n", r.message, utc(r.time_ms),
                     r.raw_size, r.raw.size() == r.raw_size ? "" : fmt::format(" ({} kept)", r.raw.size()));
  if (decoded.ok()) {
    out += fmt::format("dispatch      {} (message {} in {} from {})\n", decoded->identity.id.str(),
                       decoded->message.id.value, decoded->message.conversation.str(),
                       decoded->message.sender.str());
  } else {
    out += fmt::format("dispatch      does not decode: {}\n", decoded.error().message());
  }
  out += "raw (hex)     " + hex(r.raw) + "\n";
  return out;
}

}  // namespace qim
