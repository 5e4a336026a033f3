// EmbeddedLog's recovery on open: each partition's segments (a torn tail cut), then the journal's records
// on top (the records a power loss took from the segments' unsynced tails). Declared in embedded_log.h.
#include <algorithm>
#include <filesystem>

#include "log/embedded/embedded_log.h"
#include "log/embedded/frame.h"

namespace qim {

using embedded_log::File;
using embedded_log::Segment;

Status EmbeddedLog::recover_partition(Partition& p) {
  QIM_RETURN_IF_ERROR(embedded_log::make_dirs(p.dir));
  std::vector<uint64_t> bases;
  for (const auto& entry : std::filesystem::directory_iterator(p.dir)) {
    const std::string name = entry.path().filename().string();
    if (auto base = embedded_log::parse_segment_file_name(name)) {
      bases.push_back(*base);
    } else if (name.ends_with(".tmp")) {
      std::filesystem::remove(entry.path());
    }
  }
  std::sort(bases.begin(), bases.end());
  if (bases.empty()) {
    QIM_ASSIGN_OR_RETURN(File f, File::open(p.dir + "/" + embedded_log::segment_file_name(0), true));
    QIM_RETURN_IF_ERROR(embedded_log::sync_dir(p.dir));
    auto seg = std::make_shared<Segment>();
    seg->file = std::move(f);
    p.segments.push_back(std::move(seg));
    return {};
  }
  auto& logger = *options_.logger;
  for (size_t i = 0; i < bases.size(); ++i) {
    const bool last = i + 1 == bases.size();
    const std::string path = p.dir + "/" + embedded_log::segment_file_name(bases[i]);
    auto seg = std::make_shared<Segment>();
    seg->base = bases[i];
    QIM_ASSIGN_OR_RETURN(seg->file, File::open(path, false));
    if (!p.segments.empty() && p.segments.back()->end_offset != seg->base) {
      return Error(Errc::kCorruptEntry, path + " starts at offset " + std::to_string(seg->base) +
                                            " but the previous segment ends at " +
                                            std::to_string(p.segments.back()->end_offset));
    }
    QIM_ASSIGN_OR_RETURN(auto scan, embedded_log::scan_segment(
                                        *seg, embedded_log::max_frame_body_bytes(options_.max_record_bytes),
                                        [&](uint64_t done, uint64_t total) {
                                          logger.info("{} log: recovering {}: {} of {} MiB scanned",
                                                      options_.name, path, done >> 20, total >> 20);
                                        }));
    if (!scan.stop_reason.empty()) {
      if (!last) {
        return Error(Errc::kCorruptEntry, path + " is damaged at byte " + std::to_string(scan.valid_bytes) +
                                              " (" + scan.stop_reason + ") and is not the last segment");
      }
      // A torn tail: the writer never called back for these bytes (they were not fsync'd), so cutting them
      // loses nothing that was acknowledged.
      logger.warn("{} log: partition {}: torn tail in {}: {} bytes from offset {} on cut ({})", options_.name,
                  p.id, path, scan.file_bytes - scan.valid_bytes, scan.end_offset, scan.stop_reason);
      QIM_RETURN_IF_ERROR(seg->file.truncate(scan.valid_bytes));
      QIM_RETURN_IF_ERROR(seg->file.sync());
    }
    seg->size = scan.valid_bytes;
    seg->end_offset = scan.end_offset;
    p.segments.push_back(std::move(seg));
  }
  p.next_offset = p.segments.back()->end_offset;
  p.durable_end = p.next_offset;
  return {};
}

Status EmbeddedLog::replay_journal(std::vector<embedded_log::JournalEntry>& entries) {
  uint64_t restored = 0;
  for (const auto& entry : entries) {
    if (entry.partition >= partitions_.size()) {
      return Error(Errc::kCorruptEntry, options_.name + " log journal: an entry names partition " +
                                            std::to_string(entry.partition) + " of " +
                                            std::to_string(partitions_.size()));
    }
    Partition& p = *partitions_[entry.partition];
    std::string_view rest = entry.frames;
    while (!rest.empty()) {
      auto v = embedded_log::parse_frame(rest, embedded_log::max_frame_body_bytes(options_.max_record_bytes));
      if (v.state != embedded_log::FrameView::State::kComplete) {
        // The entry's checksum held, so its frames were whole when written: this is no torn write.
        return Error(Errc::kCorruptEntry, options_.name +
                                              " log journal: a bad frame in an entry of partition " +
                                              std::to_string(p.id) + ": " + v.why);
      }
      const uint64_t offset = v.record.offset.value;
      const std::string_view frame = rest.substr(0, v.size);
      rest.remove_prefix(v.size);
      if (offset < p.next_offset) continue;  // the segment kept it
      if (offset > p.next_offset) {
        return Error(Errc::kCorruptEntry, options_.name + " log journal holds offset " +
                                              std::to_string(offset) + " of partition " +
                                              std::to_string(p.id) + " but the partition ends at " +
                                              std::to_string(p.next_offset));
      }
      auto seg = p.segments.back();
      QIM_RETURN_IF_ERROR(seg->file.write_at(seg->size, frame));
      seg->note_frame(offset, seg->size);
      seg->size += frame.size();
      seg->end_offset = offset + 1;
      seg->max_timestamp_ms = std::max(seg->max_timestamp_ms, v.record.timestamp_ms);
      p.next_offset = offset + 1;
      p.durable_end = p.next_offset;
      if (std::find(dirty_.begin(), dirty_.end(), seg) == dirty_.end()) dirty_.push_back(seg);
      ++restored;
    }
  }
  if (restored > 0) {
    options_.logger->warn(
        "{} log: {} records restored from the journal (a crash took them from the "
        "segments' unsynced tails)",
        options_.name, restored);
  }
  replayed_ += restored;
  return {};
}

}  // namespace qim
