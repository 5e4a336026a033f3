#include "log/embedded/file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace qim::embedded_log {

namespace {
constexpr std::string_view kNoSpace = "no space left: ";

// A failed fsync is never "no space": after one, the page cache may have dropped what it could not write,
// and nothing written since the last good sync may be trusted (the log refuses appends until reopened).
Error sync_error(std::string_view what, const std::string& path) {
  return Error(Errc::kIo, std::string(what) + " " + path + ": " + std::strerror(errno));
}
}  // namespace

Error io_error(std::string_view what, const std::string& path) {
  // A full filesystem (or quota) is told apart: the write did not happen, what was written before is intact,
  // and the log takes appends again once space returns (EmbeddedLog's writer, docs/operations.md).
  const bool full = errno == ENOSPC || errno == EDQUOT;
  return Error(Errc::kIo, std::string(full ? kNoSpace : "") + std::string(what) + " " + path + ": " +
                              std::strerror(errno));
}

bool is_no_space(const Error& error) {
  return error.code() == Errc::kIo && error.message().starts_with(kNoSpace);
}

File& File::operator=(File&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    o.fd_ = -1;
  }
  return *this;
}

File::~File() {
  if (fd_ >= 0) ::close(fd_);
}

Result<File> File::open(const std::string& path, bool create) {
  const int flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0);
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return io_error("cannot open", path);
  File f;
  f.fd_ = fd;
  f.path_ = path;
  return f;
}

Result<uint64_t> File::size() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return io_error("cannot stat", path_);
  return static_cast<uint64_t>(st.st_size);
}

Status File::write_at(uint64_t pos, std::string_view bytes) const {
  while (!bytes.empty()) {
    const ssize_t n = ::pwrite(fd_, bytes.data(), bytes.size(), static_cast<off_t>(pos));
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("cannot write", path_);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
    pos += static_cast<uint64_t>(n);
  }
  return {};
}

Status File::read_at(uint64_t pos, size_t n, std::string& out) const {
  out.resize(n);
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd_, out.data() + got, n - got, static_cast<off_t>(pos + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      return io_error("cannot read", path_);
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  out.resize(got);
  return {};
}

Status File::truncate(uint64_t size) const {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) return io_error("cannot truncate", path_);
  return {};
}

Status File::sync_data() const {
  if (::fdatasync(fd_) != 0) return sync_error("cannot fdatasync", path_);
  return {};
}

Status File::sync() const {
  if (::fsync(fd_) != 0) return sync_error("cannot fsync", path_);
  return {};
}

Status make_dirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return Error(Errc::kIo, "cannot create directory " + path + ": " + ec.message());
  return {};
}

Status sync_dir(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open directory", path);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return sync_error("cannot fsync directory", path);
  return {};
}

Status write_file_atomically(const std::string& path, std::string_view content) {
  const std::string tmp = path + ".tmp";
  {
    QIM_ASSIGN_OR_RETURN(File f, File::open(tmp, true));
    QIM_RETURN_IF_ERROR(f.truncate(0));
    QIM_RETURN_IF_ERROR(f.write_at(0, content));
    QIM_RETURN_IF_ERROR(f.sync());
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) return io_error("cannot rename into", path);
  return sync_dir(std::filesystem::path(path).parent_path().string());
}

Result<std::string> read_whole_file(const std::string& path) {
  if (!std::filesystem::exists(path)) return Error(Errc::kNotFound, path + " does not exist");
  QIM_ASSIGN_OR_RETURN(File f, File::open(path, false));
  QIM_ASSIGN_OR_RETURN(uint64_t size, f.size());
  std::string out;
  QIM_RETURN_IF_ERROR(f.read_at(0, size, out));
  return out;
}

Result<DirLock> DirLock::acquire(const std::string& dir, std::string_view what) {
  const std::string path = dir + "/LOCK";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("cannot open lock file", path);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return Error(Errc::kIo, std::string(what) + " in " + dir +
                                  " is already open (another qim process, or a second open in this one): "
                                  "the embedded log is single-process");
    }
    errno = err;
    return io_error("cannot lock", path);
  }
  return DirLock(fd);
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace qim::embedded_log
