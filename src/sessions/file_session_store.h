#pragma once
// The SessionStore of `qim up` (session_store.h): the revocation marks in <data dir>/sessions/revocations,
// an append-only text file (one line per revocation: "<user> <device or *> <not_before ms>", fsynced
// before revoke() returns), read whole at open. The devices' connections are kept in memory only: after
// a restart a device shows again once it authenticates. One process owns the file (the running `qim up`;
// `qim admin sessions revoke` writes it itself only when no instance runs in the directory).

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "sessions/session_store.h"

namespace qim {

class FileSessionStore final : public SessionStore {
 public:
  // Creates <dir>/sessions if needed and reads the file. Io if it cannot; CorruptEntry naming the line for
  // a line that does not parse (but a last line without its newline, a torn append, which is ignored).
  static Result<std::unique_ptr<FileSessionStore>> open(const std::string& data_dir);
  ~FileSessionStore() override;

  Result<RevocationMarks> marks(const UserId& user) override;
  Status revoke(const UserId& user, const std::optional<DeviceId>& device, int64_t not_before_ms) override;
  Result<RevocationChanges> changes_since(std::optional<uint64_t> cursor) override;
  void connection_opened(const UserId& user, const DeviceId& device, int64_t at_ms) override;
  void connection_closed(const UserId& user, const DeviceId& device) override;
  Result<std::vector<DeviceSession>> devices(const UserId& user) override;

 private:
  struct Device {
    int64_t last_auth_ms = 0;
    uint32_t live = 0;
  };
  FileSessionStore(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

  static constexpr size_t kChangesKept = 10'000;
  const std::string path_;
  const int fd_;
  std::mutex mu_;
  std::unordered_map<std::string, RevocationMarks> marks_;
  std::unordered_map<std::string, std::unordered_map<std::string, Device>> devices_;
  uint64_t seq_ = 0;                                 // revocations since open
  std::deque<std::pair<uint64_t, UserId>> changes_;  // the last kChangesKept, by seq
};

}  // namespace qim
