#pragma once
// One gateway's presence (docs/protocol.md "Typing and presence", docs/adr/0081):
//
// - Online/offline of its own users: it counts their live connections; the first one announces the user
//   online to the exchange (presence_exchange.h), which decides across gateways; when the last one closes
//   the user goes offline only after `offline_grace` (a reconnect within it, here, is no change at all),
//   with last seen = the time the last connection closed.
// - Watchers: each connection holds a PresenceWatch: its user's direct peers (read once, at AUTH, from the
//   PresenceDirectory; they also count as contacts) and the explicit list of its last PRESENCE_SUBSCRIBE
//   (bounded). The hub asks the exchange for the changes of every user watched here (reference-counted),
//   and pushes each change it hears to the watching connections of this gateway only. Per change: no store
//   read at all (the privacy travels with the change), one frame encoded per visibility.
// - Privacy: everyone sees "everyone"; "contacts" is seen by the user's direct peers; "nobody" by nobody
//   (nor "contacts" by others): they see the user offline without a last seen. A user always sees
//   themself.
// - Blocking (docs/adr/0096): a watcher never sees the users it blocks (offline, no last seen, as
//   "nobody"); its block list is read with its peers at AUTH and again at blocks_changed.
//
// Thread-safe. Blocking calls (store and exchange reads) are marked; the rest never block.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>

#include "core/clock.h"
#include "gateway/protocol/signal_frames.h"
#include "presence/presence_directory.h"
#include "presence/presence_exchange.h"

namespace qim {

struct PresenceOptions {
  // A user whose last connection closed is offline after this long without a new one (QIM_PRESENCE_GRACE_MS).
  std::chrono::milliseconds offline_grace{5'000};
  // How often the users held here are refreshed on the exchange (where liveness expires: Redis).
  std::chrono::milliseconds refresh_interval{10'000};
  size_t max_peers = 1'000;  // direct peers subscribed implicitly per connection
};

class PresenceHub;

// One connection's subscriptions. Dropping it unsubscribes everything it watched.
class PresenceWatch : public std::enable_shared_from_this<PresenceWatch> {
 public:
  using Push = std::function<void(std::shared_ptr<const std::string> frame)>;
  ~PresenceWatch();
  PresenceWatch(const PresenceWatch&) = delete;
  PresenceWatch& operator=(const PresenceWatch&) = delete;
  const UserId& watcher() const { return watcher_; }

 private:
  friend class PresenceHub;
  PresenceWatch(PresenceHub& hub, UserId watcher, Push push)
      : hub_(hub), watcher_(std::move(watcher)), push_(std::move(push)) {}
  PresenceHub& hub_;
  const UserId watcher_;
  const Push push_;
  // Under the hub's mutex:
  std::set<UserId> peers_;     // implicit (and contacts)
  std::set<UserId> explicit_;  // the last PRESENCE_SUBSCRIBE
  std::set<UserId> blocked_;   // whom the watcher blocks: never shown
};

class PresenceHub {
 public:
  // `exchange` must outlive the hub; `directory` may be null (no peers, every privacy "everyone").
  // Starts the hub's thread (announcements, the offline debounce, refreshes).
  PresenceHub(PresenceExchange& exchange, PresenceDirectory* directory, std::shared_ptr<const Clock> clock,
              PresenceOptions options = {});
  // Stops the thread; users still held are not announced offline (their liveness expires on the exchange).
  ~PresenceHub();
  PresenceHub(const PresenceHub&) = delete;
  PresenceHub& operator=(const PresenceHub&) = delete;

  // A connection of `user` passed AUTH / closed (once each per connection). Never block.
  void connected(const UserId& user);
  void disconnected(const UserId& user);

  // A watch for one connection of `watcher`; `push` queues a frame to that connection (any thread).
  std::shared_ptr<PresenceWatch> watch(const UserId& watcher, PresenceWatch::Push push);
  // Blocking (a directory read, an exchange read): subscribes the watcher's direct peers and returns
  // their views (empty without a directory). A store error as it is (the watch is then unchanged).
  Result<std::vector<PresenceView>> subscribe_peers(PresenceWatch& watch);
  // Blocking (an exchange read): the watch's explicit list becomes `users`; returns their views.
  Result<std::vector<PresenceView>> subscribe(PresenceWatch& watch, std::vector<UserId> users);
  // The user's privacy setting changed (call after storing it): re-read and published. Never blocks.
  void privacy_changed(const UserId& user);
  // The watch's connection was pushed an entry of a direct conversation with `peer`: a conversation begun
  // after AUTH makes `peer` a direct peer (and a contact) as AUTH's read would have. New to the watch: it
  // is watched and its state pushed as a PRESENCE once read on the hub's thread (unless the watcher saw
  // it already, explicitly subscribed, and the peer's privacy is not "contacts"). Never blocks; nothing
  // past max_peers.
  void peer_seen(PresenceWatch& watch, const UserId& peer);
  // Blocking (a directory read, an exchange read): `watcher`'s block list changed. Its watches here re-read
  // it and are pushed the view of each user whose visibility changed (a blocked user: offline, no last
  // seen; an unblocked one: as it is). A read error keeps the old list (logged).
  void blocks_changed(const UserId& watcher);

  // Returns once every announcement queued before the call was made (tests).
  void flush();
  // Users online here (with a live connection, or within the offline grace).
  size_t users_held() const;
  std::string metrics_text() const;

 private:
  friend class PresenceWatch;
  struct Local {
    uint32_t connections = 0;
    std::optional<std::chrono::steady_clock::time_point> offline_due;  // in the grace
    int64_t closed_at_ms = 0;
  };
  enum class TaskKind { kOnline, kOffline, kPrivacy, kPeer };
  struct Task {
    TaskKind kind;
    UserId user;
    std::weak_ptr<PresenceWatch> watch = {};  // kPeer: the watch to push the peer's state to
    bool was_explicit = false;                // kPeer: the watch already saw the peer (PRESENCE_SUBSCRIBE)
  };
  // kPeer on the hub's thread: reads the peer's record and pushes its view (blocking exchange read).
  void push_new_peer(const Task& t);

  void run();
  void forget(PresenceWatch* watch);
  // Adds/removes `user` to the users watched by `watch` (under mu_), telling the exchange on the first/last.
  void watch_locked(PresenceWatch* watch, const UserId& user);
  void unwatch_locked(PresenceWatch* watch, const UserId& user);
  void on_change(const PresenceChange& change);
  PresencePrivacy read_privacy(const UserId& user);
  PresenceView view_for(const PresenceWatch& watch, const UserId& user, const PresenceRecord& r) const;
  static bool visible_to(const PresenceWatch& watch, const UserId& user, PresencePrivacy privacy);

  PresenceExchange& exchange_;
  PresenceDirectory* const directory_;
  const std::shared_ptr<const Clock> clock_;
  const PresenceOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<std::string, Local> local_;
  std::unordered_map<std::string, std::vector<PresenceWatch*>> watchers_;    // watched user -> watches
  std::unordered_map<std::string, std::vector<PresenceWatch*>> by_watcher_;  // watcher -> its watches
  std::deque<Task> tasks_;
  uint64_t tasks_queued_ = 0, tasks_done_ = 0;
  bool stopping_ = false;
  bool rescan_ = false;  // an offline deadline was set since the thread last looked
  std::atomic<uint64_t> changes_heard_{0}, frames_pushed_{0}, announce_failures_{0};
  std::thread thread_;
};

}  // namespace qim
