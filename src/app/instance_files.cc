#include "app/instance_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/rand.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <cerrno>

#include <filesystem>
#include <regex>

#include "log/embedded/file.h"

namespace qim {

namespace {

std::string secret_path(const std::string& data_dir) {
  return data_dir + "/auth-secret";
}
std::string running_path(const std::string& data_dir) {
  return data_dir + "/running.json";
}

}  // namespace

Result<std::optional<std::string>> load_dev_secret(const std::string& data_dir) {
  auto text = embedded_log::read_whole_file(secret_path(data_dir));
  if (!text.ok()) {
    if (text.code() == Errc::kNotFound) return std::optional<std::string>();
    return text.error();
  }
  std::string secret = *text;
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  if (secret.empty()) return Error(Errc::kConfig, secret_path(data_dir) + " is empty");
  return std::optional(secret);
}

namespace {

// Writes `content` to a new file at `path` readable by its owner only, all or nothing: a temporary file
// of a random name created 0600 with O_EXCL (mkostemp: nobody else can have it open), synced, then linked
// to `path`. False, writing nothing, if `path` exists already (another process created it first).
Result<bool> create_private_file(const std::string& path, const std::string& content) {
  std::string tmp = path + ".XXXXXX";
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0)
    return Error(Errc::kIo, "cannot create a temporary file beside " + path + ": " + std::strerror(errno));
  auto fail = [&](const char* step) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return Error(Errc::kIo, std::string(step) + " " + tmp + ": " + std::strerror(err));
  };
  if (::fchmod(fd, 0600) != 0) return fail("cannot restrict");
  for (size_t done = 0; done < content.size();) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("cannot write");
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return fail("cannot sync");
  ::close(fd);
  const int linked = ::link(tmp.c_str(), path.c_str());
  const int err = errno;
  ::unlink(tmp.c_str());
  if (linked != 0) {
    if (err == EEXIST) return false;
    return Error(Errc::kIo, "cannot create " + path + ": " + std::strerror(err));
  }
  QIM_RETURN_IF_ERROR(embedded_log::sync_dir(std::filesystem::path(path).parent_path().string()));
  return true;
}

}  // namespace

Result<std::string> load_or_create_dev_secret(const std::string& data_dir) {
  QIM_ASSIGN_OR_RETURN(auto existing, load_dev_secret(data_dir));
  if (existing) return *existing;
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return Error(Errc::kIo, "no randomness for a dev auth secret");
  std::string secret;
  for (unsigned char b : bytes) secret += fmt::format("{:02x}", b);
  QIM_RETURN_IF_ERROR(embedded_log::make_dirs(data_dir));
  // Created 0600 from its first byte, never chmod'ed after: no moment in which another user could open it.
  QIM_ASSIGN_OR_RETURN(bool created, create_private_file(secret_path(data_dir), secret + "\n"));
  if (!created) {
    QIM_ASSIGN_OR_RETURN(auto raced, load_dev_secret(data_dir));  // another process created it first
    if (!raced) return Error(Errc::kIo, secret_path(data_dir) + " appeared and vanished");
    return *raced;
  }
  return secret;
}

Status write_running_file(const std::string& data_dir, const RunningInstance& r) {
  return embedded_log::write_file_atomically(
      running_path(data_dir),
      fmt::format("{{\"pid\":{},\"gateway_port\":{},\"admin_port\":{},\"epoch\":{},\"shards\":{}}}\n", r.pid,
                  r.gateway_port, r.admin_port, r.epoch, r.shards));
}

void remove_running_file(const std::string& data_dir) {
  std::error_code ec;
  std::filesystem::remove(running_path(data_dir), ec);
}

Result<std::optional<RunningInstance>> read_running_file(const std::string& data_dir) {
  auto text = embedded_log::read_whole_file(running_path(data_dir));
  if (!text.ok()) {
    if (text.code() == Errc::kNotFound) return std::optional<RunningInstance>();
    return text.error();
  }
  static const std::regex kShape(
      R"(\{"pid":(\d+),"gateway_port":(\d+),"admin_port":(\d+),"epoch":(\d+)(?:,"shards":(\d+))?\}\s*)");  // NOLINT: const
  std::smatch m;
  if (!std::regex_match(*text, m, kShape)) {
    return Error(Errc::kCorruptEntry, running_path(data_dir) + " does not parse");
  }
  RunningInstance r;
  r.pid = std::stoll(m[1]);
  r.gateway_port = static_cast<uint16_t>(std::stoul(m[2]));
  r.admin_port = static_cast<uint16_t>(std::stoul(m[3]));
  r.epoch = static_cast<uint32_t>(std::stoul(m[4]));
  if (m[5].matched) r.shards = static_cast<uint32_t>(std::stoul(m[5]));  // absent in a file of an older qim
  return std::optional(r);
}

Status refuse_if_in_use(const std::string& data_dir, std::string_view command) {
  auto running = read_running_file(data_dir);
  if (!running.ok() || !running->has_value()) return {};
  const int64_t pid = (*running)->pid;
  // kill(pid, 0) asks whether the process exists without signalling it (EPERM: it does, someone else's).
  if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) return {};
  return Error(
      Errc::kIo,
      fmt::format("the data directory {} is in use by `qim up` (pid {}, {}/running.json): its embedded "
                  "store opens in one process at a time. Stop that `qim up` (Ctrl-C) and run `{}` "
                  "again; `qim status` and `qim quarantine` work beside it (through its admin port)",
                  data_dir, pid, data_dir, command));
}

}  // namespace qim
