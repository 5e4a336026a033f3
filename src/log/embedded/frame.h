#pragma once
// One log record as it lies in a segment file:
//
//   u32 body_len | u64 checksum | body = u64 offset, i64 timestamp_ms, u32 key_len, key, value
//
// little-endian; checksum = XXH3-64 of the body seeded with body_len, so a torn or overwritten length is
// caught as surely as torn body bytes. The offset is stored so a scan can check the sequence is unbroken.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "log/log.h"

namespace qim::embedded_log {

inline constexpr size_t kFrameHeaderBytes = 12;
inline constexpr size_t kFrameFixedBodyBytes = 20;  // offset, timestamp, key_len
inline constexpr size_t kMaxKeyBytes = 1024;

// The largest plausible frame body for records of at most `max_record_bytes` (the bound parse_frame takes).
inline constexpr size_t max_frame_body_bytes(size_t max_record_bytes) {
  return kFrameFixedBodyBytes + kMaxKeyBytes + max_record_bytes;
}

// Appends the frame of (offset, timestamp, key, value) to `out`.
void append_frame(std::string& out, uint64_t offset, int64_t timestamp_ms, std::string_view key,
                  std::string_view value);

// Bytes a frame of this key and value takes on disk.
size_t frame_size(size_t key_bytes, size_t value_bytes);

// The outcome of looking at the bytes at the start of `in`.
struct FrameView {
  enum class State {
    kComplete,   // a whole, checksum-valid frame; `record` and `size` are set
    kTruncated,  // `in` ends inside the frame; `size` is the frame's declared size if known, else 0
    kCorrupt,    // the length is impossible or the checksum does not match; `why` says which
  };
  State state = State::kCorrupt;
  size_t size = 0;
  LogRecord record;  // partition left 0: the caller knows it
  std::string why;
};

// Parses the frame at the start of `in`. `max_body_bytes` bounds a plausible length.
FrameView parse_frame(std::string_view in, size_t max_body_bytes);

}  // namespace qim::embedded_log
