#pragma once
// A segment: one file of consecutive frames of a partition, named by the offset of its first record
// ("00000000000000004096.log"). Only the partition's writer appends to it; readers pread concurrently.
// The mutable fields below are guarded by the owning Partition's mutex; the file itself needs no lock.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "log/embedded/file.h"
#include "log/log.h"

namespace qim::embedded_log {

// Every kIndexIntervalBytes of data a segment remembers (offset, file position), so a read from any
// offset scans at most that many bytes before its first record.
inline constexpr uint64_t kIndexIntervalBytes = 16 * 1024;

struct IndexEntry {
  uint64_t offset = 0;
  uint64_t pos = 0;
};

struct Segment {
  uint64_t base = 0;  // offset of the first record
  File file;
  // Published state: bytes and records a reader may rely on (the writer publishes after fsync).
  uint64_t size = 0;             // bytes of whole frames
  uint64_t end_offset = 0;       // offset after the last record
  int64_t max_timestamp_ms = 0;  // the latest append time of its records (retention deletes by it)
  std::vector<IndexEntry> index;

  // The index entry at or before `offset` (the segment start if none).
  IndexEntry seek(uint64_t offset) const;
  // Remembers a frame at (offset, pos) if it is far enough past the last index entry.
  void note_frame(uint64_t offset, uint64_t pos);
};

std::string segment_file_name(uint64_t base);
// The base offset a segment file name encodes, or nullopt if the name is not a segment's.
std::optional<uint64_t> parse_segment_file_name(const std::string& name);

// What a scan of a segment on open found.
struct ScanResult {
  uint64_t valid_bytes = 0;  // length of the unbroken run of valid frames from the start
  uint64_t end_offset = 0;   // offset after the last valid frame
  uint64_t records = 0;      // valid frames
  std::string stop_reason;   // empty when the whole file was valid
  uint64_t file_bytes = 0;   // the file's size
};

// Scans `seg` from the start, checking each frame's checksum and that offsets run on from seg.base, and
// fills seg.index and seg.max_timestamp_ms. `progress` is called now and then with bytes scanned (long scans
// show progress).
Result<ScanResult> scan_segment(Segment& seg, size_t max_body_bytes,
                                const std::function<void(uint64_t scanned, uint64_t total)>& progress);

// Reads records of `seg` with offsets in [from, limit), at most `max` records and about `max_bytes`
// bytes, starting the scan at file position `pos` (an index position at or before `from`) and never past
// `size` bytes. Appends to `out`; returns the offset after the last record appended (or `from`).
// CorruptEntry if a frame in the durable range fails its check.
Result<uint64_t> read_segment(const Segment& seg, uint64_t pos, uint64_t size, uint64_t from, uint64_t limit,
                              size_t max, size_t max_bytes, size_t max_body_bytes, uint32_t partition,
                              std::vector<LogRecord>& out);

}  // namespace qim::embedded_log
