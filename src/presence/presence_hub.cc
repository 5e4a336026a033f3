#include "presence/presence_hub.h"

#include <spdlog/spdlog.h>

#include "core/thread_name.h"

namespace qim {

PresenceWatch::~PresenceWatch() {
  hub_.forget(this);
}

PresenceHub::PresenceHub(PresenceExchange& exchange, PresenceDirectory* directory,
                         std::shared_ptr<const Clock> clock, PresenceOptions options)
    : exchange_(exchange), directory_(directory), clock_(std::move(clock)), options_(options) {
  exchange_.add_listener(this, [this](const PresenceChange& c) { on_change(c); });
  thread_ = std::thread([this] {
    set_thread_name("presence");
    run();
  });
}

PresenceHub::~PresenceHub() {
  exchange_.remove_listener(this);
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void PresenceHub::connected(const UserId& user) {
  {
    std::lock_guard lock(mu_);
    Local& l = local_[user.str()];
    if (l.connections++ > 0) return;
    if (l.offline_due) {
      // Back within the grace: for everybody else the user never left.
      l.offline_due.reset();
      return;
    }
    tasks_.push_back(Task{TaskKind::kOnline, user});
    tasks_queued_++;
  }
  cv_.notify_all();
}

void PresenceHub::disconnected(const UserId& user) {
  {
    std::lock_guard lock(mu_);
    auto it = local_.find(user.str());
    if (it == local_.end() || it->second.connections == 0) return;
    if (--it->second.connections > 0) return;
    it->second.offline_due = std::chrono::steady_clock::now() + options_.offline_grace;
    it->second.closed_at_ms = clock_->now_ms();
    rescan_ = true;  // a new deadline: the thread looks again
  }
  cv_.notify_all();
}

void PresenceHub::privacy_changed(const UserId& user) {
  {
    std::lock_guard lock(mu_);
    tasks_.push_back(Task{TaskKind::kPrivacy, user});
    tasks_queued_++;
  }
  cv_.notify_all();
}

void PresenceHub::peer_seen(PresenceWatch& watch, const UserId& peer) {
  {
    std::lock_guard lock(mu_);
    if (peer == watch.watcher_ || watch.peers_.contains(peer) || watch.peers_.size() >= options_.max_peers)
      return;
    watch.peers_.insert(peer);
    const bool was_explicit = watch.explicit_.contains(peer);
    if (!was_explicit) watch_locked(&watch, peer);
    tasks_.push_back(Task{TaskKind::kPeer, peer, watch.weak_from_this(), was_explicit});
    tasks_queued_++;
  }
  cv_.notify_all();
}

void PresenceHub::push_new_peer(const Task& t) {
  auto watch = t.watch.lock();
  if (!watch) return;
  const std::vector<UserId> one{t.user};
  auto records = exchange_.records(one);
  if (!records.ok() || records->size() != 1) {
    announce_failures_++;
    spdlog::warn("presence: the state of {}'s new peer {} could not be read: {}", watch->watcher_.str(),
                 t.user.str(), records.ok() ? "no record" : records.error().to_string());
    return;
  }
  const PresenceRecord& r = records->front();
  // Explicitly watched already: only "contacts" changes what the watcher sees by becoming a peer.
  if (t.was_explicit && r.privacy != PresencePrivacy::kContacts) return;
  std::unique_lock lock(mu_);
  const PresenceView view = view_for(*watch, t.user, r);
  lock.unlock();
  watch->push_(std::make_shared<const std::string>(encode_presence(view)));
  frames_pushed_++;
}

void PresenceHub::flush() {
  std::unique_lock lock(mu_);
  const uint64_t target = tasks_queued_;
  cv_.wait(lock, [&] { return tasks_done_ >= target || stopping_; });
}

size_t PresenceHub::users_held() const {
  std::lock_guard lock(mu_);
  return local_.size();
}

PresencePrivacy PresenceHub::read_privacy(const UserId& user) {
  if (directory_ == nullptr) return PresencePrivacy::kEveryone;
  auto p = directory_->privacy(user);
  if (p.ok()) return *p;
  // Fail closed: a setting we cannot read may be "nobody".
  announce_failures_++;
  spdlog::warn("presence: the privacy of {} could not be read ({}); announced as nobody", user.str(),
               p.error().to_string());
  return PresencePrivacy::kNobody;
}

void PresenceHub::run() {
  using SteadyClock = std::chrono::steady_clock;
  auto next_refresh = SteadyClock::now() + options_.refresh_interval;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    // The earliest offline due (the number of users in their grace is small: a scan is fine).
    auto wake = next_refresh;
    for (const auto& [user, l] : local_)
      if (l.offline_due && *l.offline_due < wake) wake = *l.offline_due;
    cv_.wait_until(lock, wake, [&] { return stopping_ || rescan_ || !tasks_.empty(); });
    if (stopping_) break;
    rescan_ = false;
    const auto now = SteadyClock::now();
    std::deque<Task> tasks;
    tasks.swap(tasks_);
    struct Offline {
      UserId user;
      int64_t at_ms;
    };
    std::vector<Offline> offline;
    for (auto it = local_.begin(); it != local_.end();) {
      if (it->second.connections == 0 && it->second.offline_due && *it->second.offline_due <= now) {
        offline.push_back(Offline{UserId::unchecked(it->first), it->second.closed_at_ms});
        it = local_.erase(it);
      } else {
        ++it;
      }
    }
    std::vector<UserId> held;
    const bool refresh = now >= next_refresh;
    if (refresh) {
      next_refresh = now + options_.refresh_interval;
      held.reserve(local_.size());
      for (const auto& [user, l] : local_) held.push_back(UserId::unchecked(user));
    }
    lock.unlock();
    // Offline first: an online queued after the user's entry was erased comes after it.
    for (const auto& o : offline) {
      if (Status s = exchange_.went_offline(o.user, read_privacy(o.user), o.at_ms); !s.ok()) {
        announce_failures_++;
        spdlog::warn("presence: {} offline not announced: {}", o.user.str(), s.error().to_string());
      }
    }
    for (const auto& t : tasks) {
      Status s;
      if (t.kind == TaskKind::kOnline) {
        s = exchange_.went_online(t.user, read_privacy(t.user));
      } else if (t.kind == TaskKind::kPrivacy) {
        s = exchange_.privacy_changed(t.user, read_privacy(t.user));
      } else if (t.kind == TaskKind::kPeer) {
        push_new_peer(t);
      }
      if (!s.ok()) {
        announce_failures_++;
        spdlog::warn("presence: a change of {} not announced: {}", t.user.str(), s.error().to_string());
      }
    }
    if (refresh && !held.empty()) {
      if (Status s = exchange_.refresh(held); !s.ok())
        spdlog::warn("presence: {} users not refreshed: {}", held.size(), s.error().to_string());
    }
    lock.lock();
    tasks_done_ += tasks.size();
    cv_.notify_all();
  }
}

std::shared_ptr<PresenceWatch> PresenceHub::watch(const UserId& watcher, PresenceWatch::Push push) {
  std::shared_ptr<PresenceWatch> w(new PresenceWatch(*this, watcher, std::move(push)));
  std::lock_guard lock(mu_);
  by_watcher_[watcher.str()].push_back(w.get());  // found by blocks_changed even when it watches nobody
  return w;
}

void PresenceHub::watch_locked(PresenceWatch* watch, const UserId& user) {
  auto& list = watchers_[user.str()];
  for (auto* w : list)
    if (w == watch) return;
  list.push_back(watch);
  if (list.size() == 1) exchange_.watch(user, true);
}

void PresenceHub::unwatch_locked(PresenceWatch* watch, const UserId& user) {
  auto it = watchers_.find(user.str());
  if (it == watchers_.end()) return;
  std::erase(it->second, watch);
  if (it->second.empty()) {
    watchers_.erase(it);
    exchange_.watch(user, false);
  }
}

void PresenceHub::forget(PresenceWatch* watch) {
  std::lock_guard lock(mu_);
  if (auto it = by_watcher_.find(watch->watcher_.str()); it != by_watcher_.end()) {
    std::erase(it->second, watch);
    if (it->second.empty()) by_watcher_.erase(it);
  }
  for (const auto& u : watch->peers_) unwatch_locked(watch, u);
  for (const auto& u : watch->explicit_) unwatch_locked(watch, u);
  watch->peers_.clear();
  watch->explicit_.clear();
}

bool PresenceHub::visible_to(const PresenceWatch& watch, const UserId& user, PresencePrivacy privacy) {
  if (watch.watcher_ == user) return true;
  if (watch.blocked_.contains(user)) return false;  // the watcher blocks them (docs/adr/0096)
  switch (privacy) {
    case PresencePrivacy::kEveryone:
      return true;
    case PresencePrivacy::kContacts:
      return watch.peers_.contains(user);
    case PresencePrivacy::kNobody:
      return false;
  }
  return false;
}

PresenceView PresenceHub::view_for(const PresenceWatch& watch, const UserId& user,
                                   const PresenceRecord& r) const {
  if (!visible_to(watch, user, r.privacy)) return PresenceView{user, false, std::nullopt};
  return PresenceView{user, r.online, r.online ? std::nullopt : r.last_seen};
}

Result<std::vector<PresenceView>> PresenceHub::subscribe_peers(PresenceWatch& watch) {
  if (directory_ == nullptr) return std::vector<PresenceView>{};
  QIM_ASSIGN_OR_RETURN(auto peers, directory_->direct_peers(watch.watcher_, options_.max_peers));
  QIM_ASSIGN_OR_RETURN(auto blocked, directory_->blocks(watch.watcher_));
  {
    std::lock_guard lock(mu_);
    watch.blocked_ = std::move(blocked);
    for (const auto& p : peers) {
      watch.peers_.insert(p);
      watch_locked(&watch, p);
    }
  }
  QIM_ASSIGN_OR_RETURN(auto records, exchange_.records(peers));
  std::vector<PresenceView> out;
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < peers.size(); ++i) out.push_back(view_for(watch, peers[i], records[i]));
  return out;
}

Result<std::vector<PresenceView>> PresenceHub::subscribe(PresenceWatch& watch, std::vector<UserId> users) {
  {
    std::lock_guard lock(mu_);
    std::set<UserId> old = std::move(watch.explicit_);
    watch.explicit_ = std::set<UserId>(users.begin(), users.end());
    for (const auto& u : old)
      if (!watch.explicit_.contains(u) && !watch.peers_.contains(u)) unwatch_locked(&watch, u);
    for (const auto& u : users) watch_locked(&watch, u);
  }
  QIM_ASSIGN_OR_RETURN(auto records, exchange_.records(users));
  std::vector<PresenceView> out;
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < users.size(); ++i) out.push_back(view_for(watch, users[i], records[i]));
  return out;
}

void PresenceHub::blocks_changed(const UserId& watcher) {
  if (directory_ == nullptr) return;
  auto blocked = directory_->blocks(watcher);
  if (!blocked.ok()) {
    spdlog::warn("presence: the block list of {} could not be read ({}); kept as it was", watcher.str(),
                 blocked.error().to_string());
    return;
  }
  std::set<UserId> changed;
  std::vector<PresenceWatch*> mine;
  {
    std::lock_guard lock(mu_);
    if (auto it = by_watcher_.find(watcher.str()); it != by_watcher_.end()) mine = it->second;
    for (PresenceWatch* w : mine) {
      for (const UserId& u : *blocked)
        if (!w->blocked_.contains(u)) changed.insert(u);
      for (const UserId& u : w->blocked_)
        if (!blocked->contains(u)) changed.insert(u);
      w->blocked_ = *blocked;
    }
  }
  if (mine.empty() || changed.empty()) return;
  const std::vector<UserId> users(changed.begin(), changed.end());
  auto records = exchange_.records(users);
  if (!records.ok()) {
    spdlog::warn("presence: records of {} users unreadable after a block change of {}: {}", users.size(),
                 watcher.str(), records.error().to_string());
    return;
  }
  std::vector<std::pair<PresenceWatch::Push, std::string>> pushes;
  {
    std::lock_guard lock(mu_);
    for (PresenceWatch* w : mine) {
      for (size_t i = 0; i < users.size(); ++i) {
        // Only users this watch shows (a peer or subscribed): others were never pushed to it.
        if (!w->peers_.contains(users[i]) && !w->explicit_.contains(users[i])) continue;
        pushes.emplace_back(w->push_, encode_presence(view_for(*w, users[i], (*records)[i])));
      }
    }
  }
  for (auto& [push, frame] : pushes) {
    push(std::make_shared<const std::string>(std::move(frame)));
    frames_pushed_++;
  }
}

void PresenceHub::on_change(const PresenceChange& c) {
  changes_heard_++;
  std::vector<std::pair<PresenceWatch::Push, bool>> targets;  // push, visible
  {
    std::lock_guard lock(mu_);
    auto it = watchers_.find(c.user.str());
    if (it == watchers_.end()) return;
    for (PresenceWatch* w : it->second) {
      const bool visible = visible_to(*w, c.user, c.record.privacy);
      // An online/offline change a watcher may not see is no news to it (it sees "offline" throughout);
      // a privacy change is, either way.
      if (!visible && !c.privacy_only) continue;
      targets.emplace_back(w->push_, visible);
    }
  }
  if (targets.empty()) return;
  std::shared_ptr<const std::string> real, hidden;
  for (auto& [push, visible] : targets) {
    auto& frame = visible ? real : hidden;
    if (!frame) {
      frame = std::make_shared<const std::string>(encode_presence(
          visible ? PresenceView{c.user, c.record.online, c.record.online ? std::nullopt : c.record.last_seen}
                  : PresenceView{c.user, false, std::nullopt}));
    }
    push(frame);
    frames_pushed_++;
  }
}

std::string PresenceHub::metrics_text() const {
  std::string out;
  auto one = [&out](const char* name, const char* type, const char* help, uint64_t v) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " +
           std::to_string(v) + "\n";
  };
  one("qim_presence_users_held", "gauge", "Users with a live connection here (or in the offline grace).",
      users_held());
  one("qim_presence_changes_heard_total", "counter", "Presence changes of watched users heard.",
      changes_heard_.load());
  one("qim_presence_frames_pushed_total", "counter", "PRESENCE frames queued to watching connections.",
      frames_pushed_.load());
  one("qim_presence_announce_failures_total", "counter",
      "Presence changes (or privacy reads) that failed on the exchange or the store.",
      announce_failures_.load());
  return out;
}

}  // namespace qim
