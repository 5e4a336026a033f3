#include "app/instance_files.h"

#include <fmt/format.h>
#include <openssl/rand.h>
#include <signal.h>
#include <sys/stat.h>

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

Result<std::string> load_or_create_dev_secret(const std::string& data_dir) {
  QIM_ASSIGN_OR_RETURN(auto existing, load_dev_secret(data_dir));
  if (existing) return *existing;
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return Error(Errc::kIo, "no randomness for a dev auth secret");
  std::string secret;
  for (unsigned char b : bytes) secret += fmt::format("{:02x}", b);
  QIM_RETURN_IF_ERROR(embedded_log::make_dirs(data_dir));
  QIM_RETURN_IF_ERROR(embedded_log::write_file_atomically(secret_path(data_dir), secret + "\n"));
  ::chmod(secret_path(data_dir).c_str(), 0600);
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
