#include "presence/presence_directory.h"

namespace qim {

void MemoryPresenceDirectory::set_privacy(const UserId& user, PresencePrivacy p) {
  std::lock_guard lock(mu_);
  privacy_[user] = p;
}

void MemoryPresenceDirectory::add_peers(const UserId& a, const UserId& b) {
  std::lock_guard lock(mu_);
  peers_[a].insert(b);
  peers_[b].insert(a);
}

Result<std::vector<UserId>> MemoryPresenceDirectory::direct_peers(const UserId& user, size_t limit) {
  std::lock_guard lock(mu_);
  std::vector<UserId> out;
  auto it = peers_.find(user);
  if (it == peers_.end()) return out;
  for (const auto& p : it->second) {
    if (out.size() == limit) break;
    out.push_back(p);
  }
  return out;
}

Result<PresencePrivacy> MemoryPresenceDirectory::privacy(const UserId& user) {
  std::lock_guard lock(mu_);
  auto it = privacy_.find(user);
  return it == privacy_.end() ? PresencePrivacy::kEveryone : it->second;
}

void MemoryPresenceDirectory::set_blocks(const UserId& user, std::set<UserId> blocked) {
  std::lock_guard lock(mu_);
  blocks_[user] = std::move(blocked);
}

Result<std::set<UserId>> MemoryPresenceDirectory::blocks(const UserId& user) {
  std::lock_guard lock(mu_);
  auto it = blocks_.find(user);
  return it == blocks_.end() ? std::set<UserId>{} : it->second;
}

}  // namespace qim
