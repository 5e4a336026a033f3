#include "webhooks/dead_letters.h"

#include <fmt/format.h>

#include <charconv>

#include "core/utc_time.h"

namespace qim {

namespace {

constexpr std::string_view kMagic = "qim-dead-letter 1";

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

// Lines: magic, id, type, attempts, dead_at_ms, error; then the body (JSON, which our writer never breaks
// across lines, but taken whole to the end anyway).
std::string encode_dead_letter(const WebhookEvent& e, uint32_t attempts, int64_t dead_at_ms,
                               const std::string& error) {
  return fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}", kMagic, e.id, e.type, attempts, dead_at_ms,
                     one_line(error), e.body);
}

Result<DeadLetter> decode_dead_letter(uint64_t position, std::string_view bytes) {
  std::vector<std::string_view> lines;
  while (lines.size() < 6) {
    const size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos)
      return Error(Errc::kCorruptEntry, fmt::format("dead letter {}: truncated", position));
    lines.push_back(bytes.substr(0, nl));
    bytes.remove_prefix(nl + 1);
  }
  if (lines[0] != kMagic)
    return Error(Errc::kCorruptEntry, fmt::format("dead letter {}: unknown format", position));
  DeadLetter d;
  d.position = position;
  d.id = std::string(lines[1]);
  d.type = std::string(lines[2]);
  auto number = [&](std::string_view text, auto& out) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
  };
  if (!number(lines[3], d.attempts) || !number(lines[4], d.dead_at_ms))
    return Error(Errc::kCorruptEntry, fmt::format("dead letter {}: bad numbers", position));
  d.error = std::string(lines[5]);
  d.body = std::string(bytes);
  return d;
}

Result<std::vector<DeadLetter>> read_dead_letters(Log& log, uint64_t from, size_t max) {
  std::vector<DeadLetter> out;
  QIM_ASSIGN_OR_RETURN(Offset end, log.end_offset(0));
  QIM_ASSIGN_OR_RETURN(Offset start, log.start_offset(0));
  uint64_t next = std::max(from, start.value);
  while (next < end.value && out.size() < max) {
    QIM_ASSIGN_OR_RETURN(auto batch, log.read(0, Offset{next}, std::min<size_t>(256, max - out.size()),
                                              std::chrono::milliseconds(1000)));
    if (batch.empty()) break;
    for (const LogRecord& r : batch) {
      auto d = decode_dead_letter(r.offset.value, r.value);
      if (d.ok()) out.push_back(std::move(d).value());
      next = r.offset.value + 1;
    }
  }
  return out;
}

std::string render_dead_letters(const std::vector<DeadLetter>& letters, uint64_t cursor) {
  std::string out;
  for (const DeadLetter& d : letters) {
    out += fmt::format("{} {} {} attempts={} dead_at={} {} error={}\n", d.position, d.id, d.type, d.attempts,
                       utc_time(d.dead_at_ms), d.position < cursor ? "replayed" : "pending", d.error);
  }
  out += fmt::format("{} dead letters listed; replay cursor at {}\n", letters.size(), cursor);
  return out;
}

}  // namespace qim
