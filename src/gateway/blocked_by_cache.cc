#include "gateway/blocked_by_cache.h"

#include <chrono>

#include "inbox/privacy.h"

namespace qim {

namespace {

constexpr std::string_view kPrefix = R"({"type":"~BLOCKED_BY_CHANGED","user":")";

}  // namespace

BlockedByCache::Lookup BlockedByCache::lookup(const UserId& user, int64_t now_ms) {
  if (ttl_ms_ <= 0) return {};  // no cache: nothing is kept, not even a generation
  std::lock_guard lock(mu_);
  auto [it, fresh] = entries_.try_emplace(user.str());
  Entry& e = it->second;
  if (fresh) e.generation = ++next_generation_;
  if (e.blockers && now_ms - e.read_at_ms < ttl_ms_) return {e.blockers, e.generation};
  return {nullptr, e.generation};
}

void BlockedByCache::store(const UserId& user, uint64_t generation,
                           std::shared_ptr<const std::set<UserId>> blockers, int64_t read_at_ms) {
  if (ttl_ms_ <= 0) return;
  std::lock_guard lock(mu_);
  auto it = entries_.find(user.str());
  if (it == entries_.end() || it->second.generation != generation) return;  // changed or forgotten since
  // Two reads of one generation: the one that began later is kept (neither saw a change: both are true).
  if (it->second.blockers && it->second.read_at_ms > read_at_ms) return;
  it->second.blockers = std::move(blockers);
  it->second.read_at_ms = read_at_ms;
}

void BlockedByCache::invalidate(const UserId& user) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(user.str());
  if (it == entries_.end()) return;  // nothing cached, and no read in flight can be stored (no entry)
  it->second.generation = ++next_generation_;
  it->second.blockers.reset();
}

void BlockedByCache::forget(const UserId& user) {
  std::lock_guard lock(mu_);
  entries_.erase(user.str());
}

int64_t BlockedByCache::now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

size_t BlockedByCache::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

Result<std::shared_ptr<const std::set<UserId>>> read_blocked_by(InboxBackend& privacy, BlockedByCache& cache,
                                                                const UserId& user, uint64_t generation) {
  const int64_t read_at = BlockedByCache::now_ms();  // before the read: what it returns is at least this new
  QIM_ASSIGN_OR_RETURN(std::set<UserId> blockers, Privacy(privacy).blocked_by(user));
  auto known = std::make_shared<const std::set<UserId>>(std::move(blockers));
  cache.store(user, generation, known, read_at);
  return known;
}

std::string encode_blocked_by_signal(const UserId& user) {
  std::string out(kPrefix);
  out += user.str();  // names hold no '"' or '\\' (core/name.h)
  out += "\"}";
  return out;
}

std::optional<UserId> blocked_by_signal_user(std::string_view frame) {
  if (!frame.starts_with(kPrefix) || !frame.ends_with("\"}")) return std::nullopt;
  frame.remove_prefix(kPrefix.size());
  frame.remove_suffix(2);
  auto user = UserId::parse(frame);
  if (!user.ok()) return std::nullopt;
  return *std::move(user);
}

}  // namespace qim
