#include "log/embedded/frame.h"

#include <xxhash.h>

#include <cstring>

#include "log/embedded/bytes.h"

namespace qim::embedded_log {

namespace {

uint64_t checksum(std::string_view body) {
  return XXH3_64bits_withSeed(body.data(), body.size(), body.size());
}

}  // namespace

size_t frame_size(size_t key_bytes, size_t value_bytes) {
  return kFrameHeaderBytes + kFrameFixedBodyBytes + key_bytes + value_bytes;
}

void append_frame(std::string& out, uint64_t offset, int64_t timestamp_ms, std::string_view key,
                  std::string_view value) {
  const size_t body_len = kFrameFixedBodyBytes + key.size() + value.size();
  const size_t start = out.size();
  put<uint32_t>(out, static_cast<uint32_t>(body_len));
  put<uint64_t>(out, 0);  // checksum, filled in below once the body is in place
  const size_t body_start = out.size();
  put<uint64_t>(out, offset);
  put<int64_t>(out, timestamp_ms);
  put<uint32_t>(out, static_cast<uint32_t>(key.size()));
  out.append(key);
  out.append(value);
  const uint64_t sum = checksum(std::string_view(out).substr(body_start, body_len));
  std::memcpy(out.data() + start + 4, &sum, sizeof sum);
}

FrameView parse_frame(std::string_view in, size_t max_body_bytes) {
  FrameView v;
  if (in.size() < kFrameHeaderBytes) {
    v.state = FrameView::State::kTruncated;
    return v;
  }
  const uint32_t body_len = get<uint32_t>(in.data());
  if (body_len < kFrameFixedBodyBytes || body_len > max_body_bytes) {
    v.why = "frame length " + std::to_string(body_len) + " is impossible";
    return v;
  }
  v.size = kFrameHeaderBytes + body_len;
  if (in.size() < v.size) {
    v.state = FrameView::State::kTruncated;
    return v;
  }
  const std::string_view body = in.substr(kFrameHeaderBytes, body_len);
  if (checksum(body) != get<uint64_t>(in.data() + 4)) {
    v.why = "frame checksum does not match";
    return v;
  }
  const uint32_t key_len = get<uint32_t>(body.data() + 16);
  if (key_len > body_len - kFrameFixedBodyBytes) {
    v.why = "key length " + std::to_string(key_len) + " exceeds the frame";
    return v;
  }
  v.record.offset = Offset{get<uint64_t>(body.data())};
  v.record.timestamp_ms = get<int64_t>(body.data() + 8);
  v.record.key.assign(body.substr(kFrameFixedBodyBytes, key_len));
  v.record.value.assign(body.substr(kFrameFixedBodyBytes + key_len));
  v.state = FrameView::State::kComplete;
  return v;
}

}  // namespace qim::embedded_log
