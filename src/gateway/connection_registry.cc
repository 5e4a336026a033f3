#include "gateway/connection_registry.h"

#include <algorithm>
#include <map>

#include "gateway/connection.h"
#include "gateway/gateway_metrics.h"
#include "gateway/protocol/server_frame.h"

namespace qim {

void ConnectionRegistry::add_open(uint64_t id, const std::shared_ptr<Connection>& c) {
  std::lock_guard lock(mu_);
  open_[id] = c;
}

void ConnectionRegistry::add_user(const UserId& user, uint64_t id, const std::shared_ptr<Connection>& c) {
  std::lock_guard lock(mu_);
  by_user_[user.str()].emplace_back(id, c);
}

void ConnectionRegistry::remove(const UserId* user, uint64_t id) {
  std::lock_guard lock(mu_);
  open_.erase(id);
  if (user == nullptr) return;
  auto it = by_user_.find(user->str());
  if (it == by_user_.end()) return;
  std::erase_if(it->second, [id](const auto& slot) { return slot.first == id; });
  if (it->second.empty()) by_user_.erase(it);
}

std::vector<std::shared_ptr<Connection>> ConnectionRegistry::all_open() const {
  std::vector<std::shared_ptr<Connection>> out;
  std::lock_guard lock(mu_);
  for (const auto& [id, weak] : open_) {
    if (auto c = weak.lock()) out.push_back(std::move(c));
  }
  return out;
}

void ConnectionRegistry::entries_visible(ShardId, MailboxSeq, std::span<const MailboxEntry> entries) {
  if (!push_ || entries.empty()) return;
  // Entries of one user keep their order (the worker reports them ascending), so pushes arrive in seq order.
  std::map<std::string, std::vector<MailboxEntry>> per_user;
  for (const auto& e : entries) per_user[e.user.str()].push_back(e);

  for (auto& [user, list] : per_user) {
    std::vector<std::shared_ptr<Connection>> targets;
    {
      std::lock_guard lock(mu_);
      auto it = by_user_.find(user);
      if (it == by_user_.end()) continue;
      for (const auto& [id, weak] : it->second) {
        if (auto c = weak.lock()) targets.push_back(std::move(c));
      }
    }
    if (targets.empty()) continue;
    auto frame = std::make_shared<const std::string>(encode_deliver(list));
    for (auto& c : targets) c->push(frame);
    metrics_.entries_pushed.Increment(static_cast<double>(list.size() * targets.size()));
  }
}

}  // namespace qim
