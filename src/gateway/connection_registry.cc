#include "gateway/connection_registry.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "core/conversation.h"
#include "gateway/connection.h"
#include "gateway/gateway_metrics.h"
#include "gateway/protocol/server_frame.h"
#include "gateway/reply_quotes.h"

namespace qim {

namespace {

// The gateway's options are checked before it starts; a count outside the map's range falls back to one
// shard, which only makes a break's SYNC_NEEDED reach more users than needed.
ShardMap shard_map(uint32_t shard_count) {
  auto m = ShardMap::create(shard_count);
  return m.ok() ? *m : *ShardMap::create(1);
}

}  // namespace

ConnectionRegistry::ConnectionRegistry(bool push_enabled, uint32_t shard_count, GatewayMetrics& metrics,
                                       int64_t block_cache_ms)
    : push_(push_enabled), shards_(shard_map(shard_count)), metrics_(metrics), blocked_by_(block_cache_ms) {}

void ConnectionRegistry::add_open(uint64_t id, const std::shared_ptr<Connection>& c) {
  std::lock_guard lock(mu_);
  open_[id] = c;
}

void ConnectionRegistry::add_user(const UserId& user, uint64_t id, const std::shared_ptr<Connection>& c) {
  std::lock_guard lock(mu_);
  auto [it, fresh] = by_user_.try_emplace(user.str());
  UserState& u = it->second;
  if (fresh) {
    // The registration point: every entry up to the chain's current end is the SYNC's to return, every
    // later one comes as a push. Another device of a user already registered keeps the user's point,
    // which is at or below this one, so the new device's SYNC covers it too.
    u.shard = shards_.shard_of(user);
    const Chain& chain = chains_[u.shard.value];
    u.generation = chain.generation;
    u.sent_through = chain.end;
  }
  u.connections.emplace_back(id, c);
}

void ConnectionRegistry::set_blocks(const UserId& user, std::shared_ptr<const std::set<UserId>> blocks) {
  std::lock_guard lock(mu_);
  if (auto it = by_user_.find(user.str()); it != by_user_.end()) it->second.blocks = std::move(blocks);
}

void ConnectionRegistry::remove(const UserId* user, uint64_t id) {
  std::lock_guard lock(mu_);
  open_.erase(id);
  if (user == nullptr) return;
  auto it = by_user_.find(user->str());
  if (it == by_user_.end()) return;
  std::erase_if(it->second.connections, [id](const auto& slot) { return slot.first == id; });
  if (!it->second.connections.empty()) return;
  by_user_.erase(it);
  blocked_by_.forget(*user);  // its own lock, never taken with mu_ the other way round
}

std::vector<std::shared_ptr<Connection>> ConnectionRegistry::all_open() const {
  std::vector<std::shared_ptr<Connection>> out;
  std::lock_guard lock(mu_);
  for (const auto& [id, weak] : open_) {
    if (auto c = weak.lock()) out.push_back(std::move(c));
  }
  return out;
}

void ConnectionRegistry::break_locked(ShardId shard, Chain& chain, MailboxSeq restart_at,
                                      std::vector<std::shared_ptr<Connection>>& resync) {
  chain.generation++;
  chain.start = restart_at;
  for (auto& [user, state] : by_user_) {
    if (state.shard != shard) continue;
    for (const auto& [id, weak] : state.connections) {
      if (auto c = weak.lock()) resync.push_back(std::move(c));
    }
  }
}

void ConnectionRegistry::send_sync_needed(const std::vector<std::shared_ptr<Connection>>& resync,
                                          const std::string& reason) {
  if (resync.empty()) return;
  auto frame = std::make_shared<const std::string>(encode_sync_needed(reason));
  for (const auto& c : resync) c->push(frame);
  metrics_.sync_needed.Increment(static_cast<double>(resync.size()));
}

namespace {

// The other members of the direct conversations among `entries` (one user's), each once.
std::vector<UserId> direct_peers_in(const std::vector<MailboxEntry>& entries) {
  std::vector<UserId> peers;
  for (const auto& e : entries) {
    auto c = Conversation::of(e.message.conversation);
    if (!c.ok() || c->direct_pair() == nullptr) continue;
    auto peer = c->direct_pair()->peer_of(e.user);
    if (peer && *peer != e.user && std::find(peers.begin(), peers.end(), *peer) == peers.end())
      peers.push_back(*peer);
  }
  return peers;
}

}  // namespace

void ConnectionRegistry::entries_visible(ShardId shard, MailboxSeq from, MailboxSeq to,
                                         std::span<const MailboxEntry> entries) {
  if (!push_) return;
  // Entries of one user keep their order (the worker reports them ascending), so pushes arrive in seq order.
  std::map<std::string, std::vector<MailboxEntry>> per_user;
  for (const auto& e : entries) per_user[e.user.str()].push_back(e);

  std::vector<std::shared_ptr<Connection>> resync;
  std::vector<std::pair<std::shared_ptr<const std::string>, std::vector<std::shared_ptr<Connection>>>> sends;
  // Direct peers met in the pushed entries, per user's connections (presence's contacts, after the lock).
  std::vector<std::pair<std::vector<UserId>, std::vector<std::shared_ptr<Connection>>>> peers_seen;
  std::string reason;
  // The replies' quotes, read before the lock (store reads); a failed read pushes them without (logged).
  std::map<uint64_t, ReplyQuote> quotes;
  if (auto read = quote_entries(quote_history_, quote_messages_, entries); read.ok()) {
    quotes = std::move(read).value();
  } else {
    spdlog::warn("gateway: quotes of pushed replies not read: {}", read.error().to_string());
  }
  {
    std::lock_guard lock(mu_);
    Chain& chain = chains_[shard.value];
    if (!chain.end) {
      chain.start = from;  // the first report of this shard: the chain starts here
    } else if (*chain.end != from) {
      reason = "shard " + std::to_string(shard.value) + ": pushes missing between " + chain.end->to_string() +
               " and " + from.to_string();
      break_locked(shard, chain, from, resync);
    }
    chain.end = to;
    for (auto& [user, list] : per_user) {
      auto it = by_user_.find(user);
      if (it == by_user_.end()) continue;
      UserState& u = it->second;
      const bool ours = u.shard == shard;  // always, unless the deployment's shard count differs
      const MailboxSeq sent_from =
          ours && u.generation == chain.generation && u.sent_through ? *u.sent_through : chain.start;
      if (ours) {
        u.generation = chain.generation;
        u.sent_through = to;
      }
      std::vector<std::shared_ptr<Connection>> targets;
      for (const auto& [id, weak] : u.connections) {
        if (auto c = weak.lock()) targets.push_back(std::move(c));
      }
      if (targets.empty()) continue;
      metrics_.entries_pushed.Increment(static_cast<double>(list.size() * targets.size()));
      // Entries from users this user blocks are flagged (set_blocks); nothing more per entry otherwise.
      ReaderMarks marks;
      if (u.blocks && !u.blocks->empty())
        marks.from_blocked = [blocks = u.blocks](const Message& m) { return blocks->contains(m.sender); };
      if (!quotes.empty()) marks.quotes = &quotes;
      // A large push goes as several DELIVERs of bounded size, which chain like the reports do.
      for (std::string& frame : encode_delivers(list, sent_from, to, kMaxMessageFrameBytes,
                                                marks.from_blocked || marks.quotes ? &marks : nullptr))
        sends.emplace_back(std::make_shared<const std::string>(std::move(frame)), targets);
      if (auto peers = direct_peers_in(list); !peers.empty())
        peers_seen.emplace_back(std::move(peers), targets);
    }
  }
  // Queued in the order of the reports: a SYNC_NEEDED before the pushes that follow the break.
  send_sync_needed(resync, reason);
  for (auto& [frame, targets] : sends) {
    for (auto& c : targets) c->push(frame);
  }
  for (auto& [peers, targets] : peers_seen) {
    for (auto& c : targets) c->direct_peers_seen(peers);
  }
}

void ConnectionRegistry::range_unknown(ShardId shard, MailboxSeq from, MailboxSeq to) {
  if (!push_) return;
  std::vector<std::shared_ptr<Connection>> resync;
  {
    std::lock_guard lock(mu_);
    Chain& chain = chains_[shard.value];
    break_locked(shard, chain, to, resync);
    chain.end = to;
  }
  send_sync_needed(resync, "shard " + std::to_string(shard.value) + ": entries in (" + from.to_string() +
                               ", " + to.to_string() + "] could not be pushed");
}

void ConnectionRegistry::deliver_signal(std::span<const UserId> users,
                                        std::shared_ptr<const std::string> frame,
                                        uint64_t except_connection) {
  if (is_revocation_signal(*frame)) {
    // Sent by SessionService::revoke to this user's gateways; the client never sees it.
    if (auto s = decode_revocation_signal(*frame); s.ok()) apply_revocation(s->user, s->marks);
    return;
  }
  if (auto user = blocked_by_signal_user(*frame)) {
    blocked_by_.invalidate(*user);  // sent by a BLOCK or UNBLOCK of the user (privacy_requests.cc)
    return;
  }
  std::vector<std::shared_ptr<Connection>> targets;
  {
    std::lock_guard lock(mu_);
    for (const UserId& user : users) {
      auto it = by_user_.find(user.str());
      if (it == by_user_.end()) continue;
      for (const auto& [id, weak] : it->second.connections) {
        if (id == except_connection) continue;
        if (auto c = weak.lock()) targets.push_back(std::move(c));
      }
    }
  }
  for (auto& c : targets) c->push(frame);
  // The user's block list changed on some gateway: this gateway's presence hub re-reads it (once: it
  // serves every connection of the user here). The frame is written by privacy_frames.cc, type first.
  if (!targets.empty() && frame->starts_with(R"({"type":"BLOCK_CHANGED")"))
    targets.front()->block_list_changed();
}

void ConnectionRegistry::apply_revocation(const UserId& user, const RevocationMarks& marks) {
  std::vector<std::shared_ptr<Connection>> targets;
  {
    std::lock_guard lock(mu_);
    auto it = by_user_.find(user.str());
    if (it == by_user_.end()) return;
    for (const auto& [id, weak] : it->second.connections)
      if (auto c = weak.lock()) targets.push_back(std::move(c));
  }
  for (auto& c : targets) c->revoke_if(marks);
}

std::vector<UserId> ConnectionRegistry::users() const {
  std::lock_guard lock(mu_);
  std::vector<UserId> out;
  out.reserve(by_user_.size());
  for (const auto& [user, state] : by_user_) out.push_back(UserId::unchecked(user));
  return out;
}

}  // namespace qim
