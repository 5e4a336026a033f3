#include "sessions/file_session_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace qim {

namespace {

Error io_error(const std::string& what) {
  return Error(Errc::kIo, what + ": " + std::strerror(errno));
}

}  // namespace

Result<std::unique_ptr<FileSessionStore>> FileSessionStore::open(const std::string& data_dir) {
  const std::string dir = data_dir + "/sessions";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error(Errc::kIo, "cannot create " + dir + ": " + ec.message());
  const std::string path = dir + "/revocations";
  std::unordered_map<std::string, RevocationMarks> marks;
  {
    std::ifstream in(path, std::ios::binary);
    std::stringstream all;
    all << in.rdbuf();
    const std::string text = all.str();
    size_t start = 0, line_no = 0;
    while (start < text.size()) {
      const size_t end = text.find('\n', start);
      if (end == std::string::npos) break;  // a torn last append: never acknowledged, ignored
      ++line_no;
      std::istringstream line(text.substr(start, end - start));
      std::string user, device;
      int64_t nb = -1;
      line >> user >> device >> nb;
      auto u = UserId::parse(user);
      std::optional<DeviceId> d;
      bool ok = u.ok() && nb >= 0 && !device.empty();
      if (ok && device != "*") {
        auto parsed = DeviceId::parse(device);
        ok = parsed.ok();
        if (ok) d = std::move(parsed).value();
      }
      if (!ok)
        return Error(Errc::kCorruptEntry, path + ": line " + std::to_string(line_no) + " does not parse");
      marks[user].raise(d, nb);
      start = end + 1;
    }
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return io_error("cannot open " + path);
  auto store = std::unique_ptr<FileSessionStore>(new FileSessionStore(path, fd));
  store->marks_ = std::move(marks);
  return store;
}

FileSessionStore::~FileSessionStore() {
  ::close(fd_);
}

Result<RevocationMarks> FileSessionStore::marks(const UserId& user) {
  std::lock_guard lock(mu_);
  auto it = marks_.find(user.str());
  return it == marks_.end() ? RevocationMarks{} : it->second;
}

Status FileSessionStore::revoke(const UserId& user, const std::optional<DeviceId>& device,
                                int64_t not_before_ms) {
  if (not_before_ms < 0) return Error(Errc::kInvalidArgument, "not_before must not be negative");
  const std::string line = user.str() + " " + (device ? device->str() : std::string("*")) + " " +
                           std::to_string(not_before_ms) + "\n";
  std::lock_guard lock(mu_);
  // Durable before it counts: AUTH after a restart must still refuse the revoked tokens.
  if (::write(fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    return io_error("cannot append to " + path_);
  if (::fdatasync(fd_) != 0) return io_error("cannot sync " + path_);
  marks_[user.str()].raise(device, not_before_ms);
  changes_.emplace_back(++seq_, user);
  if (changes_.size() > kChangesKept) changes_.pop_front();
  return {};
}

Result<RevocationChanges> FileSessionStore::changes_since(std::optional<uint64_t> cursor) {
  std::lock_guard lock(mu_);
  RevocationChanges out;
  out.cursor = seq_;
  if (!cursor) return out;
  if (!changes_.empty() && changes_.front().first > *cursor + 1) out.complete = false;
  for (const auto& [seq, user] : changes_)
    if (seq > *cursor) out.users.push_back(user);
  return out;
}

void FileSessionStore::connection_opened(const UserId& user, const DeviceId& device, int64_t at_ms) {
  std::lock_guard lock(mu_);
  Device& d = devices_[user.str()][device.str()];
  d.last_auth_ms = std::max(d.last_auth_ms, at_ms);
  ++d.live;
}

void FileSessionStore::connection_closed(const UserId& user, const DeviceId& device) {
  std::lock_guard lock(mu_);
  auto u = devices_.find(user.str());
  if (u == devices_.end()) return;
  auto d = u->second.find(device.str());
  if (d != u->second.end() && d->second.live > 0) --d->second.live;
}

Result<std::vector<DeviceSession>> FileSessionStore::devices(const UserId& user) {
  std::lock_guard lock(mu_);
  std::map<std::string, DeviceSession> by_device;
  RevocationMarks m;
  if (auto it = marks_.find(user.str()); it != marks_.end()) m = it->second;
  if (auto u = devices_.find(user.str()); u != devices_.end()) {
    for (const auto& [device, d] : u->second)
      by_device[device] = DeviceSession{device, d.last_auth_ms, d.live, 0};
  }
  for (const auto& [device, nb] : m.device_not_before_ms) by_device[device].device = device;
  std::vector<DeviceSession> out;
  for (auto& [device, s] : by_device) {
    s.not_before_ms = m.not_before(DeviceId::unchecked(device));
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace qim
