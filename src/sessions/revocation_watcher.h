#pragma once
// A gateway's catch-up on revocations (docs/adr/0099-session-revocation.md): every `interval` it asks the
// SessionStore which users were revoked since its last round and hands each one's marks to `apply` (the
// gateway closes the live connections they revoke). This is what bounds the close of a live connection
// when the push through the signal bus was missed: at most one interval (plus the store's round trip)
// after the revocation was recorded. When the store forgot changes (trimmed, restarted) or could not be
// read for a while, every user with a live connection here (`live_users`) is checked; so is every one at
// each kFullCheckEvery-th round, which closes the one window a push and a round can both miss (a
// revocation recorded between an AUTH's check and its connection's registration).

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "sessions/session_store.h"

namespace qim {

class RevocationWatcher {
 public:
  using Apply = std::function<void(const UserId&, const RevocationMarks&)>;
  using LiveUsers = std::function<std::vector<UserId>()>;
  static constexpr uint64_t kFullCheckEvery = 60;

  // `store` must outlive the watcher; `apply` and `live_users` are called on its thread.
  RevocationWatcher(SessionStore& store, Apply apply, LiveUsers live_users,
                    std::chrono::milliseconds interval);
  ~RevocationWatcher();  // stop()
  RevocationWatcher(const RevocationWatcher&) = delete;
  RevocationWatcher& operator=(const RevocationWatcher&) = delete;

  // Takes the store's current cursor (if it answers; else the first round that reaches it checks every
  // live user) and starts the thread.
  void start();
  void stop();
  // One round on the caller's thread (tests; start() not needed). The store's error, if any.
  Status round();
  uint64_t rounds() const;

 private:
  void run();

  SessionStore& store_;
  const Apply apply_;
  const LiveUsers live_users_;
  const std::chrono::milliseconds interval_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::optional<uint64_t> cursor_;  // unset: not known yet (check every live user once it is)
  uint64_t rounds_ = 0;
  std::thread thread_;
};

}  // namespace qim
