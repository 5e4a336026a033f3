#pragma once
// Who blocks each user who sends through this gateway (inbox/privacy.h's reverse index, `~blockedby~<user>`),
// kept so that a direct SEND or a TYPING is checked without a store read on every frame (docs/adr/0166).
//
// What it promises:
// - An entry is served for at most `ttl_ms` after the read that filled it began; past that the caller reads
//   the store again. ttl_ms = 0 serves nothing (every check reads, as before decision 166).
// - A block or unblock of a user (privacy_requests.cc) sends the invalidation signal below to that user's
//   gateways before its BLOCK_OK; a gateway receiving it drops the user's entry, and a read that began
//   before the drop is not stored (a generation is quoted from lookup to store). So a block holds on a
//   sender's gateway once its signal arrives, and at the latest `ttl_ms` after BLOCK_OK if the signal was
//   lost (signals are at most once: a Redis outage, a route not yet registered).
// - Bounded: entries are made only for users who check, who have a live connection here; the registry
//   forgets a user with their last connection (and a forgotten user's reads in flight are not stored).
//
// Thread-safe (one mutex; no store access under it). Times are a steady clock's milliseconds, the caller's.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/name.h"
#include "core/status.h"

namespace qim {

class BlockedByCache {
 public:
  explicit BlockedByCache(int64_t ttl_ms) : ttl_ms_(ttl_ms) {}

  struct Lookup {
    std::shared_ptr<const std::set<UserId>> blockers;  // null: read the store, then store() the answer
    uint64_t generation = 0;                           // what store() must be given for that read
  };
  // The users who block `user`, if read within ttl_ms before `now_ms` and not invalidated since.
  Lookup lookup(const UserId& user, int64_t now_ms);
  // Keeps a read that began after lookup() answered `generation`, made at `read_at_ms`; dropped when
  // the user was invalidated or forgotten in between (the read may predate the change).
  void store(const UserId& user, uint64_t generation, std::shared_ptr<const std::set<UserId>> blockers,
             int64_t read_at_ms);
  // Someone blocked or unblocked `user`: the next check reads the store.
  void invalidate(const UserId& user);
  // `user` has no connection here any more.
  void forget(const UserId& user);
  size_t size() const;
  int64_t ttl_ms() const { return ttl_ms_; }
  // The steady clock in ms, as the gateway passes it to lookup() and store().
  static int64_t now_ms();

 private:
  struct Entry {
    uint64_t generation = 0;
    std::shared_ptr<const std::set<UserId>> blockers;  // null: none stored in this generation
    int64_t read_at_ms = 0;
  };
  const int64_t ttl_ms_;
  mutable std::mutex mu_;
  uint64_t next_generation_ = 0;
  std::unordered_map<std::string, Entry> entries_;
};

class InboxBackend;

// A check's read when lookup() had nothing: who blocks `user` from `privacy` (inbox/privacy.h), kept in
// `cache` under `generation` (lookup's) unless a block change came meanwhile. The store's error otherwise
// (nothing kept).
Result<std::shared_ptr<const std::set<UserId>>> read_blocked_by(InboxBackend& privacy, BlockedByCache& cache,
                                                                const UserId& user, uint64_t generation);

// The invalidation a block change sends to its target's gateways through the signal bus
// (delivery/signal_bus.h): a JSON object that is no client frame, type "~BLOCKED_BY_CHANGED", never sent to
// a client (ConnectionRegistry::deliver_signal takes it).
std::string encode_blocked_by_signal(const UserId& user);
// The user an invalidation names; nullopt for any other frame (or a malformed one).
std::optional<UserId> blocked_by_signal_user(std::string_view frame);

}  // namespace qim
