#pragma once
// Where presence changes meet across gateways (docs/adr/0081). Each gateway's PresenceHub tells the
// exchange when a user's first connection on it opened (went_online) and, after the debounce, when their
// last one closed (went_offline); the exchange decides whether that changes the user's presence over the
// whole deployment (any gateway still holding one: no change) and, when it does, tells every listener
// that watches the user: ONE publication per change, whatever the number of watchers (their gateways
// filter by privacy and push to their own connections).
//
// Implementations: MemoryPresenceExchange (one process: `qim up`, tests with several hubs) and
// RedisPresenceExchange (presence/redis/: the routing Redis, a pub/sub channel per watched user).

#include <functional>
#include <span>
#include <vector>

#include "core/status.h"
#include "presence/presence_types.h"

namespace qim {

class PresenceExchange {
 public:
  using Listener = std::function<void(const PresenceChange&)>;
  virtual ~PresenceExchange() = default;

  // Every change of a watched user (see watch()) goes to each listener, on a thread of the exchange.
  // `owner` names it for remove_listener, which returns once no call to it is in progress.
  virtual void add_listener(const void* owner, Listener listener) = 0;
  virtual void remove_listener(const void* owner) = 0;
  // Whether this process wants the changes of `user` (reference-counted by the caller: one call with true
  // when the first local watcher comes, one with false when the last goes). Non-blocking.
  virtual void watch(const UserId& user, bool on) = 0;

  // The calls below may block (one round trip); the hub calls them on its own thread.
  // This process holds the user's first live connection.
  virtual Status went_online(const UserId& user, PresencePrivacy privacy) = 0;
  // This process holds none of the user's connections any more, since `at_ms`.
  virtual Status went_offline(const UserId& user, PresencePrivacy privacy, int64_t at_ms) = 0;
  // The user's privacy setting is now `privacy` (watchers that lose sight are told).
  virtual Status privacy_changed(const UserId& user, PresencePrivacy privacy) = 0;
  // This process still holds these users (keeps them online where liveness expires). Default: nothing.
  virtual Status refresh(std::span<const UserId> users) {
    (void)users;
    return {};
  }
  // The current records of `users`, in order. Unknown users: offline, never seen, everyone.
  virtual Result<std::vector<PresenceRecord>> records(std::span<const UserId> users) = 0;
};

}  // namespace qim
