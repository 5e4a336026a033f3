#include "log/embedded/segment.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "log/embedded/frame.h"

namespace qim::embedded_log {

namespace {
constexpr size_t kReadChunkBytes = 256 * 1024;
constexpr uint64_t kProgressEveryBytes = 64ull << 20;
}  // namespace

IndexEntry Segment::seek(uint64_t offset) const {
  auto it = std::upper_bound(index.begin(), index.end(), offset,
                             [](uint64_t o, const IndexEntry& e) { return o < e.offset; });
  if (it == index.begin()) return IndexEntry{base, 0};
  return *std::prev(it);
}

void Segment::note_frame(uint64_t offset, uint64_t pos) {
  const uint64_t last = index.empty() ? 0 : index.back().pos;
  if (pos >= last + kIndexIntervalBytes) index.push_back(IndexEntry{offset, pos});
}

std::string segment_file_name(uint64_t base) {
  char name[32];
  std::snprintf(name, sizeof name, "%020llu.log", static_cast<unsigned long long>(base));
  return name;
}

std::optional<uint64_t> parse_segment_file_name(const std::string& name) {
  if (name.size() != 24 || name.substr(20) != ".log") return std::nullopt;
  uint64_t base = 0;
  auto [p, ec] = std::from_chars(name.data(), name.data() + 20, base);
  if (ec != std::errc() || p != name.data() + 20) return std::nullopt;
  return base;
}

Result<ScanResult> scan_segment(Segment& seg, size_t max_body_bytes,
                                const std::function<void(uint64_t, uint64_t)>& progress) {
  ScanResult out;
  QIM_ASSIGN_OR_RETURN(out.file_bytes, seg.file.size());
  out.end_offset = seg.base;
  seg.index.clear();
  seg.max_timestamp_ms = 0;
  std::string buf;
  uint64_t buf_pos = 0;  // file position of buf[0]
  size_t at = 0;         // parse position inside buf
  uint64_t next_progress = kProgressEveryBytes;
  while (true) {
    const uint64_t pos = buf_pos + at;
    if (pos >= out.file_bytes) break;
    FrameView v = parse_frame(std::string_view(buf).substr(at), max_body_bytes);
    if (v.state == FrameView::State::kTruncated) {
      if (buf_pos + buf.size() >= out.file_bytes) {
        out.stop_reason = "the last frame is cut short";
        break;
      }
      // Refill from the frame's start, large enough for the whole frame.
      QIM_RETURN_IF_ERROR(seg.file.read_at(pos, std::max(kReadChunkBytes, v.size), buf));
      buf_pos = pos;
      at = 0;
      continue;
    }
    if (v.state == FrameView::State::kCorrupt) {
      out.stop_reason = v.why;
      break;
    }
    if (v.record.offset.value != out.end_offset) {
      out.stop_reason = "frame holds offset " + std::to_string(v.record.offset.value) + ", expected " +
                        std::to_string(out.end_offset);
      break;
    }
    seg.note_frame(out.end_offset, pos);
    seg.max_timestamp_ms = std::max(seg.max_timestamp_ms, v.record.timestamp_ms);
    out.end_offset++;
    out.records++;
    at += v.size;
    out.valid_bytes = buf_pos + at;
    if (progress && out.valid_bytes >= next_progress) {
      progress(out.valid_bytes, out.file_bytes);
      next_progress += kProgressEveryBytes;
    }
  }
  return out;
}

Result<uint64_t> read_segment(const Segment& seg, uint64_t pos, uint64_t size, uint64_t from, uint64_t limit,
                              size_t max, size_t max_bytes, size_t max_body_bytes, uint32_t partition,
                              std::vector<LogRecord>& out) {
  uint64_t next = from;
  size_t bytes = 0;
  std::string buf;
  uint64_t buf_pos = pos;
  size_t at = 0;
  while (pos < size && next < limit && out.size() < max && bytes < max_bytes) {
    FrameView v = parse_frame(std::string_view(buf).substr(at), max_body_bytes);
    if (v.state == FrameView::State::kTruncated) {
      const size_t want =
          static_cast<size_t>(std::min<uint64_t>(std::max(kReadChunkBytes, v.size), size - pos));
      QIM_RETURN_IF_ERROR(seg.file.read_at(pos, want, buf));
      buf_pos = pos;
      at = 0;
      if (buf.size() < std::max<size_t>(v.size, kFrameHeaderBytes)) {
        return Error(Errc::kCorruptEntry,
                     seg.file.path() + ": durable frame at byte " + std::to_string(pos) + " is cut short");
      }
      continue;
    }
    if (v.state == FrameView::State::kCorrupt) {
      return Error(Errc::kCorruptEntry,
                   seg.file.path() + ": frame at byte " + std::to_string(pos) + ": " + v.why);
    }
    at += v.size;
    pos = buf_pos + at;
    const uint64_t offset = v.record.offset.value;
    if (offset < from) continue;  // scanning forward from an index entry
    if (offset >= limit) break;
    if (offset != next) {
      return Error(Errc::kCorruptEntry, seg.file.path() + ": frame holds offset " + std::to_string(offset) +
                                            ", expected " + std::to_string(next));
    }
    bytes += v.record.key.size() + v.record.value.size();
    v.record.partition = partition;
    out.push_back(std::move(v.record));
    next = offset + 1;
  }
  return next;
}

}  // namespace qim::embedded_log
