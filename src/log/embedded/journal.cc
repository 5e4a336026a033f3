#include "log/embedded/journal.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>

#include "log/embedded/bytes.h"

namespace qim::embedded_log {

namespace {

constexpr char kMagic[8] = {'Q', 'I', 'M', 'J', 'R', 'N', 'L', '1'};
constexpr uint64_t kSlotBytes = 512;
constexpr size_t kEntryHeaderBytes = 12;  // u32 body_len, u64 checksum
constexpr size_t kZeroChunk = 1 << 20;

uint64_t entry_checksum(std::string_view body, uint64_t generation) {
  return XXH3_64bits_withSeed(body.data(), body.size(), (generation * 0x9E3779B97F4A7C15ull) ^ body.size());
}

std::string header_slot(uint64_t generation) {
  std::string s(kMagic, sizeof kMagic);
  put<uint64_t>(s, generation);
  put<uint64_t>(s, XXH3_64bits(s.data(), s.size()));
  return s;
}

std::optional<uint64_t> parse_slot(std::string_view bytes) {
  if (bytes.size() < 24 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) return std::nullopt;
  if (get<uint64_t>(bytes.data() + 16) != XXH3_64bits(bytes.data(), 16)) return std::nullopt;
  return get<uint64_t>(bytes.data() + 8);
}

// Writes zeros over [from, to).
Status zero_fill(const File& file, uint64_t from, uint64_t to) {
  const std::string zeros(kZeroChunk, '\0');
  for (uint64_t pos = from; pos < to; pos += kZeroChunk) {
    QIM_RETURN_IF_ERROR(
        file.write_at(pos, std::string_view(zeros).substr(0, std::min<uint64_t>(kZeroChunk, to - pos))));
  }
  return {};
}

}  // namespace

Result<Journal> Journal::open(const std::string& path, uint64_t capacity,
                              std::vector<JournalEntry>& entries) {
  if (capacity < kMinJournalBytes) {
    return Error(Errc::kInvalidArgument, "embedded log journal: capacity " + std::to_string(capacity) +
                                             " is below " + std::to_string(kMinJournalBytes) + " bytes");
  }
  entries.clear();
  Journal j;
  j.capacity_ = capacity;
  // Created under a temporary name and renamed once its header is durable: a crash during the creation
  // must not leave a journal without a header, which would refuse every later open.
  const std::string tmp = path + ".tmp";
  std::error_code ec;
  std::filesystem::remove(tmp, ec);  // a creation a crash interrupted
  if (!std::filesystem::exists(path)) {
    QIM_ASSIGN_OR_RETURN(File created, File::open(tmp, true));
    QIM_RETURN_IF_ERROR(zero_fill(created, 0, capacity));
    j.generation_ = 1;
    QIM_RETURN_IF_ERROR(created.write_at((j.generation_ % 2) * kSlotBytes, header_slot(j.generation_)));
    QIM_RETURN_IF_ERROR(created.sync());
    std::filesystem::rename(tmp, path, ec);
    if (ec) return Error(Errc::kIo, "embedded log journal: cannot rename " + tmp + ": " + ec.message());
    QIM_RETURN_IF_ERROR(sync_dir(std::filesystem::path(path).parent_path().string()));
    QIM_ASSIGN_OR_RETURN(j.file_, File::open(path, false));
    return j;
  }
  QIM_ASSIGN_OR_RETURN(j.file_, File::open(path, false));
  QIM_ASSIGN_OR_RETURN(uint64_t size, j.file_.size());
  std::string bytes;
  QIM_RETURN_IF_ERROR(j.file_.read_at(0, size, bytes));
  std::optional<uint64_t> generation;
  for (uint64_t slot = 0; slot < 2; ++slot) {
    if (bytes.size() < (slot + 1) * kSlotBytes) continue;
    auto g = parse_slot(std::string_view(bytes).substr(slot * kSlotBytes, kSlotBytes));
    if (g && (!generation || *g > *generation)) generation = g;
  }
  if (!generation) {
    return Error(Errc::kCorruptEntry, path + ": neither journal header slot is valid (" +
                                          std::to_string(size) +
                                          " bytes); the log cannot tell what to replay");
  }
  j.generation_ = *generation;
  uint64_t pos = kJournalHeaderBytes;
  while (pos + kEntryHeaderBytes + 4 <= bytes.size()) {
    const uint32_t body_len = get<uint32_t>(bytes.data() + pos);
    if (body_len < 4 || body_len > bytes.size() - pos - kEntryHeaderBytes) break;
    const std::string_view body(bytes.data() + pos + kEntryHeaderBytes, body_len);
    if (get<uint64_t>(bytes.data() + pos + 4) != entry_checksum(body, j.generation_)) break;  // torn or stale
    entries.push_back(JournalEntry{get<uint32_t>(body.data()), std::string(body.substr(4))});
    pos += kEntryHeaderBytes + body_len;
  }
  j.pos_ = pos;
  return j;
}

Result<bool> Journal::append(std::span<const JournalEntry> entries) {
  uint64_t total = 0;
  for (const auto& e : entries) total += kEntryHeaderBytes + 4 + e.frames.size();
  if (pos_ + total > capacity_) return false;
  std::string buf;
  buf.reserve(total);
  for (const auto& e : entries) {
    const size_t start = buf.size();
    put<uint32_t>(buf, static_cast<uint32_t>(4 + e.frames.size()));
    put<uint64_t>(buf, 0);  // checksum, below
    put<uint32_t>(buf, e.partition);
    buf += e.frames;
    const uint64_t sum = entry_checksum(std::string_view(buf).substr(start + kEntryHeaderBytes), generation_);
    std::memcpy(buf.data() + start + 4, &sum, sizeof sum);
  }
  QIM_RETURN_IF_ERROR(file_.write_at(pos_, buf));
  if (Status s = file_.sync_data(); !s.ok()) {
    // The batch is reported failed: its entries must not come back at the next open. Best effort (the disk
    // just failed a sync); the next append writes over the same range anyway.
    (void)file_.write_at(pos_, std::string(buf.size(), '\0'));
    return s.error();
  }
  pos_ += total;
  return true;
}

Status Journal::reset() {
  QIM_ASSIGN_OR_RETURN(uint64_t size, file_.size());
  if (size != capacity_) {
    // The header slots are left as they are until the new one is written: a crash in between still finds
    // the old generation, whose entries are durable in the segments by now (replaying them is harmless).
    if (size > capacity_) QIM_RETURN_IF_ERROR(file_.truncate(capacity_));
    QIM_RETURN_IF_ERROR(zero_fill(file_, std::min(size, capacity_), capacity_));
    QIM_RETURN_IF_ERROR(file_.sync());
  }
  ++generation_;
  QIM_RETURN_IF_ERROR(file_.write_at((generation_ % 2) * kSlotBytes, header_slot(generation_)));
  QIM_RETURN_IF_ERROR(file_.sync_data());
  pos_ = kJournalHeaderBytes;
  return {};
}

}  // namespace qim::embedded_log
