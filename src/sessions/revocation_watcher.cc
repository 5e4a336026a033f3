#include "sessions/revocation_watcher.h"

#include <spdlog/spdlog.h>

#include <set>

#include "core/thread_name.h"

namespace qim {

RevocationWatcher::RevocationWatcher(SessionStore& store, Apply apply, LiveUsers live_users,
                                     std::chrono::milliseconds interval)
    : store_(store), apply_(std::move(apply)), live_users_(std::move(live_users)), interval_(interval) {}

RevocationWatcher::~RevocationWatcher() {
  stop();
}

void RevocationWatcher::start() {
  if (auto now = store_.changes_since(std::nullopt); now.ok()) {
    std::lock_guard lock(mu_);
    cursor_ = now->cursor;
  }
  thread_ = std::thread([this] { run(); });
}

void RevocationWatcher::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint64_t RevocationWatcher::rounds() const {
  std::lock_guard lock(mu_);
  return rounds_;
}

Status RevocationWatcher::round() {
  std::optional<uint64_t> cursor;
  bool full = false;
  {
    std::lock_guard lock(mu_);
    cursor = cursor_;
    full = (rounds_ + 1) % kFullCheckEvery == 0;
  }
  QIM_ASSIGN_OR_RETURN(RevocationChanges changes,
                       store_.changes_since(cursor ? cursor : std::optional<uint64_t>(0)));
  std::vector<UserId> users = std::move(changes.users);
  if (!cursor || !changes.complete || full) {
    // Changes may have been missed: every user held here is checked.
    auto live = live_users_();
    users.insert(users.end(), live.begin(), live.end());
  }
  std::set<std::string> seen;
  for (const UserId& user : users) {
    if (!seen.insert(user.str()).second) continue;
    auto marks = store_.marks(user);
    if (!marks.ok()) return marks.error();  // the cursor stays: the next round retries these users
    if (!marks->empty()) apply_(user, *marks);
  }
  std::lock_guard lock(mu_);
  cursor_ = changes.cursor;
  ++rounds_;
  return {};
}

void RevocationWatcher::run() {
  set_thread_name("revocations");
  std::unique_lock lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, interval_, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    if (Status s = round(); !s.ok())
      spdlog::warn("sessions: the revocation check failed (retried in {} ms): {}", interval_.count(),
                   s.error().to_string());
    lock.lock();
  }
}

}  // namespace qim
