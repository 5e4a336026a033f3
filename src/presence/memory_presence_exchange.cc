#include "presence/memory_presence_exchange.h"

namespace qim {

void MemoryPresenceExchange::add_listener(const void* owner, Listener listener) {
  std::lock_guard lock(listeners_mu_);
  listeners_.emplace_back(owner, std::move(listener));
}

void MemoryPresenceExchange::remove_listener(const void* owner) {
  std::lock_guard lock(listeners_mu_);
  std::erase_if(listeners_, [owner](const auto& l) { return l.first == owner; });
}

void MemoryPresenceExchange::notify(const PresenceChange& change) {
  for (const auto& [owner, l] : listeners_) l(change);
}

Status MemoryPresenceExchange::went_online(const UserId& user, PresencePrivacy privacy) {
  std::lock_guard order(listeners_mu_);
  PresenceChange change{user, {}, false};
  {
    std::lock_guard lock(mu_);
    State& s = users_[user];
    s.record.privacy = privacy;
    if (s.holders++ > 0) return {};
    s.record.online = true;
    change.record = s.record;
  }
  notify(change);
  return {};
}

Status MemoryPresenceExchange::went_offline(const UserId& user, PresencePrivacy privacy, int64_t at_ms) {
  std::lock_guard order(listeners_mu_);
  PresenceChange change{user, {}, false};
  {
    std::lock_guard lock(mu_);
    State& s = users_[user];
    s.record.privacy = privacy;
    if (s.holders == 0 || --s.holders > 0) return {};
    s.record.online = false;
    s.record.last_seen = at_ms;
    change.record = s.record;
  }
  notify(change);
  return {};
}

Status MemoryPresenceExchange::privacy_changed(const UserId& user, PresencePrivacy privacy) {
  std::lock_guard order(listeners_mu_);
  PresenceChange change{user, {}, true};
  {
    std::lock_guard lock(mu_);
    State& s = users_[user];
    if (s.record.privacy == privacy) return {};
    s.record.privacy = privacy;
    change.record = s.record;
  }
  notify(change);
  return {};
}

Result<std::vector<PresenceRecord>> MemoryPresenceExchange::records(std::span<const UserId> users) {
  std::lock_guard lock(mu_);
  std::vector<PresenceRecord> out;
  out.reserve(users.size());
  for (const auto& u : users) {
    auto it = users_.find(u);
    out.push_back(it == users_.end() ? PresenceRecord{} : it->second.record);
  }
  return out;
}

}  // namespace qim
