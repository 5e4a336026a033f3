#pragma once
// The live connections of a gateway, by user, and the push side of hybrid delivery: the MailboxNode's
// notifier lands here and each visible entry is queued to every live connection (every device) of its
// user. The mailbox stays the truth; what the registry adds is that a client can always tell whether it
// holds everything (docs/protocol.md "Delivery"):
//
// - Per shard it follows the chain of reported frontier ranges. Per user with live connections it keeps
//   the point of that chain up to which the user has been sent every entry: set at registration (AUTH) to
//   the chain's current end, moved by each DELIVER. A DELIVER carries `from` (that point) and `frontier`
//   (the report's end): it holds every entry of the mailbox in (from, frontier]. Work per report is
//   O(entries): users without entries in it are not touched (their point stays valid while the chain is
//   unbroken, because no entry of theirs went by).
// - A break in a shard's chain (a report whose `from` is not the previous end, or a range reported
//   unknown) sends SYNC_NEEDED to every live connection of that shard's users and starts a new chain;
//   points of the old chain are no longer trusted. That costs O(users with connections), and only on a
//   break.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "archiver/history_store.h"
#include "core/sharding.h"
#include "delivery/notifier.h"
#include "delivery/signal_bus.h"
#include "gateway/blocked_by_cache.h"
#include "lifecycle/message_state_store.h"
#include "sessions/revocation.h"

namespace qim {

class Connection;
class GatewayMetrics;

class ConnectionRegistry final : public DeliveryNotifier, public SignalSink {
 public:
  // `shard_count`: how users map to shards (the deployment's), to find the users of a broken shard.
  // `block_cache_ms`: how long who blocks a connected user is kept (blocked_by_cache.h; 0: not kept).
  ConnectionRegistry(bool push_enabled, uint32_t shard_count, GatewayMetrics& metrics,
                     int64_t block_cache_ms = 0);

  // Every open connection (for stop()), and the authenticated ones by user (for pushes). Thread-safe.
  void add_open(uint64_t id, const std::shared_ptr<Connection>& c);
  // Registers an authenticated connection; from now on it gets its user's pushes (and SYNC_NEEDED).
  void add_user(const UserId& user, uint64_t id, const std::shared_ptr<Connection>& c);
  void remove(const UserId* user, uint64_t id);
  std::vector<std::shared_ptr<Connection>> all_open() const;
  // Whom `user` blocks (inbox/privacy.h), kept while the user has a connection here, so that the DELIVERs
  // encoded for them flag entries from those users ("from_blocked"). Loaded after AUTH and again when the
  // user's list changes (BLOCK on this gateway, or a BLOCK_CHANGED signal): advisory, a DELIVER encoded
  // before a reload lands goes unflagged (SYNC and HISTORY read the store). No-op for a user not here.
  void set_blocks(const UserId& user, std::shared_ptr<const std::set<UserId>> blocks);
  // Who blocks each connected user, for their direct SENDs' and TYPINGs' checks. The registry drops a
  // user's entry on the invalidation signal (encode_blocked_by_signal) and with their last connection.
  BlockedByCache& blocked_by() { return blocked_by_; }
  // Where a DELIVER's replies are quoted from (reply_quotes.h; docs/adr/0125): set once, before pushes.
  // Without a history store, replies are pushed with reply_to and no quote.
  void set_quote_sources(HistoryStore* history, MessageStateStore* messages) {
    quote_history_ = history;
    quote_messages_ = messages;
  }

  // Called on the delivery thread: groups entries by user, encodes one DELIVER per user, queues it to
  // each of that user's connections (their strands do the writing). Never blocks on a connection. A
  // report that does not continue the shard's chain first sends SYNC_NEEDED (see above). A report with
  // replies reads their quotes first (on this thread: one state read and a history read per replied message;
  // a report without replies reads nothing).
  void entries_visible(ShardId shard, MailboxSeq from, MailboxSeq to,
                       std::span<const MailboxEntry> entries) override;
  // Sends SYNC_NEEDED to every live connection of the shard's users and restarts the shard's chain at `to`.
  void range_unknown(ShardId shard, MailboxSeq from, MailboxSeq to) override;
  // (SignalSink) Queues an ephemeral signal to the users' live connections (in every delivery mode: a
  // signal is not an entry of the mailbox; docs/adr/0080).
  // A revocation signal (sessions/revocation.h) is not queued: it goes to apply_revocation; nor is a
  // block list's invalidation (blocked_by_cache.h): it goes to blocked_by().
  void deliver_signal(std::span<const UserId> users, std::shared_ptr<const std::string> frame,
                      uint64_t except_connection) override;
  // Closes the user's live connections whose token `marks` revoke (on their strands). Thread-safe.
  void apply_revocation(const UserId& user, const RevocationMarks& marks);
  // The users with a live authenticated connection here.
  std::vector<UserId> users() const;

 private:
  HistoryStore* quote_history_ = nullptr;
  MessageStateStore* quote_messages_ = nullptr;

  struct Chain {
    std::optional<MailboxSeq> end;  // the last reported `to`; none before the first report
    MailboxSeq start;               // every move of the shard since this point was reported here
    uint64_t generation = 0;        // bumped on each break: older users' points are void
  };
  struct UserState {
    ShardId shard;
    std::vector<std::pair<uint64_t, std::weak_ptr<Connection>>> connections;
    uint64_t generation = 0;
    std::optional<MailboxSeq> sent_through;          // every entry up to here was sent (in this generation)
    std::shared_ptr<const std::set<UserId>> blocks;  // set_blocks; null: none known
  };
  // Breaks `shard`'s chain and collects the live connections of its users.
  void break_locked(ShardId shard, Chain& chain, MailboxSeq restart_at,
                    std::vector<std::shared_ptr<Connection>>& resync);
  void send_sync_needed(const std::vector<std::shared_ptr<Connection>>& resync, const std::string& reason);

  const bool push_;
  const ShardMap shards_;
  GatewayMetrics& metrics_;
  BlockedByCache blocked_by_;
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, std::weak_ptr<Connection>> open_;
  std::unordered_map<std::string, UserState> by_user_;
  std::unordered_map<uint32_t, Chain> chains_;
};

}  // namespace qim
