// Connection members for TYPING and PRESENCE_SUBSCRIBE, and the presence hooks at AUTH and close
// (ephemeral_requests.h).
#include "gateway/ephemeral_requests.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

#include "gateway/connection.h"
#include "gateway/gateway_context.h"
#include "gateway/group_requests.h"
#include "gateway/membership.h"
#include "gateway/protocol/server_frame.h"
#include "gateway/protocol/signal_frames.h"
#include "inbox/privacy.h"

namespace qim {

namespace net = boost::asio;

bool take_typing_token(EphemeralState& state, const ConversationId& conversation,
                       std::chrono::steady_clock::time_point now) {
  auto it = state.typing.find(conversation);
  if (it == state.typing.end()) {
    if (state.typing.size() >= kMaxTypingConversations)
      std::erase_if(state.typing, [&](const auto& kv) { return now - kv.second.last >= kTypingIdle; });
    if (state.typing.size() >= kMaxTypingConversations) return false;
    it = state.typing
             .emplace(conversation,
                      EphemeralState::Typing{TokenBucket(kTypingPerSecond, kTypingBurst, now), now})
             .first;
  }
  it->second.last = now;
  return it->second.bucket.take(now);
}

TypingTargets group_typing_targets(GroupStore& store, const GroupId& group, const UserId& me,
                                   uint32_t max_members) {
  TypingTargets out;
  GroupCheck check = check_group_member(store, group, me);
  if (!check.member) {
    out.refusal = check.code;
    out.message = check.message;
    return out;
  }
  auto state = store.load(group);
  if (!state.ok()) {
    out.refusal = wire_code_of(state.code());
    out.message = "the group could not be read: " + state.error().message();
    return out;
  }
  if (!*state || !(*state)->exists()) {
    out.refusal = WireCode::kUnknownGroup;
    out.message = "no group '" + group.str() + "'";
    return out;
  }
  const GroupState& g = **state;
  if (g.meta()->member_count > max_members) {
    out.refusal = WireCode::kTooLarge;
    out.message = "the group has " + std::to_string(g.meta()->member_count) +
                  " members; typing is sent in groups of at most " + std::to_string(max_members);
    return out;
  }
  for (const auto& [user, record] : g.members()) {
    if (user == me || !record.joined_at()) continue;  // joined_at: a current member
    out.users.push_back(user);
  }
  return out;
}

void Connection::handle_typing(const std::string& ref, const TypingFrame& f) {
  const UserId& me = principal_->user;
  auto c = Conversation::of(f.conversation);
  if (!c.ok()) {
    send_error(ref, WireCode::kInvalidArgument, c.error().message());
    return;
  }
  const GroupId* group = c->group_id();
  if (group == nullptr && !is_member(me, f.conversation)) {
    send_error(ref, WireCode::kForbidden,
               "you are not a member of conversation '" + f.conversation.str() + "'");
    return;
  }
  if (!take_typing_token(*ephemeral_, f.conversation, Clock::now())) {
    send_error(ref, WireCode::kRateLimited,
               "TYPING over " + std::to_string(static_cast<int>(kTypingPerSecond)) +
                   " per second per conversation (bursts of " +
                   std::to_string(static_cast<int>(kTypingBurst)) + ", at most " +
                   std::to_string(kMaxTypingConversations) + " conversations at once); dropped");
    return;
  }
  std::string frame = encode_typing(f.conversation, me, f.stop);
  InboxBackend* privacy = privacy_backend();
  if (group == nullptr) {
    auto peer = c->direct_pair()->peer_of(me);
    if (!peer || *peer == me) return;
    if (privacy == nullptr) {
      ctx_.signals->send(std::span(&*peer, 1), std::move(frame));
      return;
    }
    // A user who blocks the sender hears none of their typing (docs/adr/0096): dropped without a word.
    // Who blocks the sender as the SENDs' check keeps it (blocked_by_cache.h), else one read.
    SignalBus* signals = ctx_.signals;
    BlockedByCache* cache = &ctx_.registry.blocked_by();
    BlockedByCache::Lookup cached = cache->lookup(me, BlockedByCache::now_ms());
    if (cached.blockers) {
      if (!cached.blockers->contains(*peer)) signals->send(std::span(&*peer, 1), std::move(frame));
      return;
    }
    run_pooled(ctx_.blocking, ref,
               [signals, privacy, cache, generation = cached.generation, me, peer = *peer,
                frame = std::move(frame)]() mutable {
                 auto blockers = read_blocked_by(*privacy, *cache, me, generation);
                 if (!blockers.ok()) return std::string();  // fail closed: a typing signal is never owed
                 if (!(*blockers)->contains(peer)) signals->send(std::span(&peer, 1), std::move(frame));
                 return std::string();
               });
    return;
  }
  GroupStore* groups = ctx_.deps.groups;
  if (groups == nullptr) {
    send_error(ref, WireCode::kUnavailable, "groups are not served by this gateway");
    return;
  }
  SignalBus* signals = ctx_.signals;
  GatewayMetrics* metrics = &ctx_.metrics;
  run_pooled(ctx_.blocking, ref,
             [groups, signals, metrics, privacy, ref, g = *group, me, frame = std::move(frame)]() mutable {
               TypingTargets t = group_typing_targets(*groups, g, me);
               if (t.refusal) {
                 metrics->errors(*t.refusal).Increment();
                 return encode_error(ref, *t.refusal, t.message);
               }
               if (privacy != nullptr) {
                 // Members who block the sender are left out (one read; fail closed: nobody hears it).
                 auto blockers = Privacy(*privacy).blocked_by(me);
                 if (!blockers.ok()) return std::string();
                 std::erase_if(t.users, [&](const UserId& u) { return blockers->contains(u); });
               }
               signals->send(t.users, std::move(frame));
               return std::string();  // no answer
             });
}

void Connection::handle_presence_subscribe(const std::string& ref, PresenceSubscribeFrame f) {
  std::weak_ptr<PresenceWatch> watch = ephemeral_->watch;
  PresenceHub* hub = ctx_.presence;
  GatewayMetrics* metrics = &ctx_.metrics;
  run_pooled(ctx_.blocking, ref, [hub, watch, metrics, ref, users = std::move(f.users)]() mutable {
    auto w = watch.lock();
    if (!w) return std::string();  // the connection is closing
    auto views = hub->subscribe(*w, std::move(users));
    if (!views.ok()) {
      metrics->errors(WireCode::kUnavailable).Increment();
      spdlog::warn("gateway: PRESENCE_SUBSCRIBE of {} failed: {}", w->watcher().str(),
                   views.error().to_string());
      return encode_error(ref, WireCode::kUnavailable, "presence could not be read; retry later");
    }
    return encode_presence_state(ref, *views);
  });
}

void Connection::presence_connected() {
  if (InboxBackend* privacy = privacy_backend()) {
    // The block list, for the DELIVERs encoded for this user here (connection_registry.h set_blocks).
    run_pooled(ctx_.blocking, "", [privacy, registry = &ctx_.registry, user = principal_->user] {
      load_blocks(privacy, *registry, user);
      return std::string();
    });
  }
  if (!ephemeral_) ephemeral_ = std::make_unique<EphemeralState>();
  PresenceHub* hub = ctx_.presence;
  hub->connected(principal_->user);
  ephemeral_->counted = true;
  ephemeral_->watch =
      hub->watch(principal_->user, [weak = weak_from_this()](std::shared_ptr<const std::string> frame) {
        if (auto self = weak.lock()) self->push(std::move(frame));
      });
  {
    std::lock_guard lock(peer_watch_mu_);
    peer_watch_ = ephemeral_->watch;
  }
  // The direct peers' state, pushed once read (a PRESENCE_STATE without ref); nothing without peers.
  std::weak_ptr<PresenceWatch> watch = ephemeral_->watch;
  run_pooled(ctx_.blocking, "", [hub, watch] {
    auto w = watch.lock();
    if (!w) return std::string();
    auto views = hub->subscribe_peers(*w);
    if (!views.ok()) {
      spdlog::warn("gateway: the direct peers of {} could not be read for presence: {}", w->watcher().str(),
                   views.error().to_string());
      return std::string();
    }
    return views->empty() ? std::string() : encode_presence_state("", *views);
  });
}

void Connection::direct_peers_seen(std::span<const UserId> peers) {
  std::shared_ptr<PresenceWatch> watch;
  {
    std::lock_guard lock(peer_watch_mu_);
    watch = peer_watch_.lock();
  }
  if (!watch || ctx_.presence == nullptr) return;
  for (const auto& p : peers) ctx_.presence->peer_seen(*watch, p);
}

void load_blocks(InboxBackend* privacy, ConnectionRegistry& registry, const UserId& user) {
  if (privacy == nullptr) return;
  auto list = Privacy(*privacy).blocks(user);
  if (!list.ok()) {
    spdlog::warn("gateway: the block list of {} unreadable, DELIVERs stay unflagged: {}", user.str(),
                 list.error().to_string());
    return;
  }
  registry.set_blocks(user, std::make_shared<const std::set<UserId>>(list->begin(), list->end()));
}

void Connection::block_list_changed() {
  net::post(ws_.get_executor(), [self = shared_from_this()] {
    if (!self->principal_ || self->close_) return;
    PresenceHub* hub = self->ctx_.presence;
    self->run_pooled(self->ctx_.blocking, "",
                     [hub, privacy = self->privacy_backend(), registry = &self->ctx_.registry,
                      user = self->principal_->user] {
                       if (hub != nullptr) hub->blocks_changed(user);
                       load_blocks(privacy, *registry, user);
                       return std::string();
                     });
  });
}

void Connection::presence_closed() {
  if (!ephemeral_) return;
  {
    std::lock_guard lock(peer_watch_mu_);
    peer_watch_.reset();
  }
  ephemeral_->watch.reset();
  if (ephemeral_->counted) {
    ephemeral_->counted = false;
    ctx_.presence->disconnected(principal_->user);
  }
}

}  // namespace qim
