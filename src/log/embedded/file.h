#pragma once
// Small RAII wrappers over POSIX files for the embedded log: every failure is an Io error naming the path
// and the system's reason, never an exception or an ignored return code.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace qim::embedded_log {

class File {
 public:
  File() = default;
  File(File&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }
  File& operator=(File&& o) noexcept;
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File();

  // Opens for reading and writing, creating the file if `create`.
  static Result<File> open(const std::string& path, bool create);

  const std::string& path() const { return path_; }
  Result<uint64_t> size() const;
  // Writes all of `bytes` at `pos`.
  Status write_at(uint64_t pos, std::string_view bytes) const;
  // Reads up to `n` bytes at `pos` into `out` (resized to what was read; short only at end of file).
  Status read_at(uint64_t pos, size_t n, std::string& out) const;
  Status truncate(uint64_t size) const;
  Status sync_data() const;  // fdatasync
  Status sync() const;       // fsync

 private:
  int fd_ = -1;
  std::string path_;
};

// An Io error "<what> <path>: <strerror(errno)>", prefixed "no space left: " when errno is ENOSPC or EDQUOT.
Error io_error(std::string_view what, const std::string& path);
// Whether `error` is a write (or create) refused for want of space: nothing was written past what the call
// reports, and the same write may succeed once space returns. A failed fsync is never this.
bool is_no_space(const Error& error);

Status make_dirs(const std::string& path);
// fsyncs a directory so a create, rename or delete in it is durable.
Status sync_dir(const std::string& path);
// Replaces `path` with `content` atomically: write a temporary file, fsync it, rename, fsync the directory.
Status write_file_atomically(const std::string& path, std::string_view content);
// The whole file, or NotFound if it does not exist.
Result<std::string> read_whole_file(const std::string& path);

// An exclusive advisory lock on `<dir>/LOCK`, held while the object lives. Io naming the holder problem if
// another process (or another open in this one) holds it.
class DirLock {
 public:
  static Result<DirLock> acquire(const std::string& dir, std::string_view what);
  DirLock(DirLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  DirLock& operator=(DirLock&&) = delete;
  DirLock(const DirLock&) = delete;
  ~DirLock();

 private:
  explicit DirLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace qim::embedded_log
