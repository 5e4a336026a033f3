#pragma once
// The embedded log's journal: one preallocated file per log (<dir>/JOURNAL) that makes a writer batch
// durable with a single fdatasync, whatever the number of partitions it touched. Without it, a batch
// fdatasync'd every touched segment: the mailbox log's batches (two shards per message) cost about 1.7
// fdatasyncs per message, the largest CPU cost of `qim up` on a VM (decision 36).
//
// The writer writes a batch's frames into their segments (page cache, no sync), then appends them here
// and syncs this file only; a record is published once its journal entry is durable. The segments are
// synced at a checkpoint (when the journal is full, and at close), after which the journal starts a new
// generation. On open, after the segments are recovered (torn tails cut), the entries of the current
// generation give back whatever a power loss took from the segments' unsynced tails.
//
//   bytes 0 and 512   two header slots: 8-byte magic, u64 generation, u64 XXH3 of both; a checkpoint
//                     writes the slot of its new generation, so a torn header write leaves the other
//   from 4096         entries: u32 body_len | u64 checksum | body = u32 partition, frames (frame.h)
//
// The checksum of an entry is XXH3-64 of its body seeded with the generation and the length, so entries
// left over from an earlier generation (the file is reused, not truncated) end the scan like a torn one.
// The file keeps its size (it is written with zeros once), so an entry's fdatasync has no metadata to
// write. Thread safety: none; only the log's writer thread (and open) use it.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "log/embedded/file.h"

namespace qim::embedded_log {

inline constexpr uint64_t kJournalHeaderBytes = 4096;
inline constexpr uint64_t kMinJournalBytes = 2 * kJournalHeaderBytes;

struct JournalEntry {
  uint32_t partition = 0;
  std::string frames;  // whole frames of that partition, consecutive offsets
};

class Journal {
 public:
  Journal() = default;

  // Opens <path>, or creates it with `capacity` bytes of zeros and a header, under <path>.tmp renamed once
  // durable (a leftover <path>.tmp, from a creation a crash interrupted, is removed). `entries` gets
  // the current generation's entries, in write order, up to the first torn or stale one. CorruptEntry if
  // neither header slot is valid; Io on a failed read or write; InvalidArgument for a capacity below
  // kMinJournalBytes.
  static Result<Journal> open(const std::string& path, uint64_t capacity, std::vector<JournalEntry>& entries);

  // Appends the entries and fdatasyncs the file. false (nothing written) if they do not fit in what is left
  // of the generation: the caller makes the batch durable by a checkpoint instead. Io on a failed write or
  // sync; after one the journal's state is unknown and the log stops taking appends.
  Result<bool> append(std::span<const JournalEntry> entries);

  // Starts a new generation (everything the journal held must be durable elsewhere first), at its full
  // capacity: a file of another size (the option changed) is rewritten with zeros. Io on failure.
  Status reset();

  uint64_t generation() const { return generation_; }
  uint64_t used() const { return pos_ - kJournalHeaderBytes; }
  uint64_t capacity() const { return capacity_; }

 private:
  Status write_header();

  File file_;
  uint64_t capacity_ = 0;    // the size the file is kept at
  uint64_t generation_ = 0;  // of the entries being written
  uint64_t pos_ = kJournalHeaderBytes;
};

}  // namespace qim::embedded_log
