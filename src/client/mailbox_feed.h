#pragma once
// The client's delivery loop of docs/protocol.md "Delivery", written once: the e2e suite, the load
// generator and `qimctl listen` all use it.
//
// The loop keeps a cursor: every entry of the mailbox at or below it has been shown. After AUTH_OK it SYNCs
// from the cursor until `more` is false, and then trusts the page's `frontier` (the page held every entry up
// to it). While a SYNC is in progress, pushes are buffered, never applied (applying one would move the
// cursor past entries the SYNC has not returned yet). A DELIVER is applied only when it continues what the
// client holds (its `from` is at or below the cursor: the frame holds every entry in (from, frontier]);
// otherwise, and on SYNC_NEEDED, the loop SYNCs from the cursor. Entries at or below the cursor are
// never shown again: every entry is shown exactly once, in seq order.
//
// Every message is shown once, too: an entry whose message_id is among the last `dedup_window` message
// ids shown is skipped (the cursor still moves past it). In split brain (ADR-0022) a message both owners
// finished is in the mailbox once per epoch, at two seqs; the second copy comes later in seq order and is
// skipped. Memory is bounded: at most `dedup_window` ids (a FIFO and a hash set, ~40 bytes an id), so a
// second copy further than that many entries behind its first would show again. The ids may be kept
// with the cursor (recent_message_ids(), Options::recent_message_ids) so a restart keeps them too.
// An entry the user deleted for themselves (a SYNC stub, `deleted_for_me`) moves the cursor and is not
// shown.
//
// MailboxFeed is the loop as a state machine without I/O (for callers driving a connection themselves,
// like the load generator's callbacks); MailboxFollower runs it over a queueing Client.

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "client/client.h"
#include "client/frames.h"
#include "core/status.h"

namespace qim::client {

class MailboxFeed {
 public:
  struct Options {
    uint64_t cursor = 0;              // the stored cursor: every entry at or below it was shown before
    uint32_t sync_limit = 500;        // entries per SYNC page
    bool sync_allowed = true;         // false in delivery mode "push" (the gateway refuses SYNC): pushes only
    std::string ref_prefix = "feed";  // the refs of the loop's SYNC frames: "<prefix>-<n>"
    size_t dedup_window = 1024;       // message ids remembered to skip a second copy; 0: no de-duplication
    std::vector<uint64_t> recent_message_ids;  // ids shown before (oldest first), kept with the cursor
  };
  // What the caller does after handing over a frame: show `show` (in this order), then send `send`.
  struct Actions {
    std::vector<Entry> show;
    std::optional<std::string> send;  // a SYNC frame
    std::optional<Error> error;       // our SYNC was refused: the run stopped (the caller decides)
  };

  explicit MailboxFeed(Options options);

  // After AUTH_OK: the first SYNC, from the cursor (nothing in push mode).
  Actions start();
  // Whether `f` belongs to the loop: a DELIVER, a SYNC_NEEDED, or the answer to the loop's SYNC.
  bool wants(const ServerFrame& f) const;
  // Hands a frame of the connection to the loop (frames it does not want are ignored).
  Actions on_frame(const ServerFrame& f);
  // A SYNC from the cursor now (pull mode polls with it); if one is in progress, another follows it.
  Actions resync();

  uint64_t cursor() const { return cursor_; }
  bool syncing() const { return syncing_; }
  const std::string& outstanding_ref() const { return outstanding_ref_; }
  uint64_t sync_runs() const { return sync_runs_; }    // the first SYNC and every resync
  uint64_t gaps() const { return gaps_; }              // DELIVERs that did not continue, and SYNC_NEEDEDs
  uint64_t duplicates() const { return duplicates_; }  // entries skipped: their message was shown before
  // The message ids remembered (oldest first, at most dedup_window): to keep with the cursor.
  std::vector<uint64_t> recent_message_ids() const { return {recent_.begin(), recent_.end()}; }

 private:
  void begin_sync(Actions& a);
  void request_page(Actions& a);
  void on_page(const ServerFrame& page, Actions& a);
  // Applies a DELIVER if it continues what the client holds; false (nothing changed) if not.
  bool apply(const ServerFrame& deliver, Actions& a);
  void show(const std::vector<Entry>& entries, Actions& a);
  void drain_pending(Actions& a);
  // Remembers `id`; false if it was remembered already (a second copy of the message).
  bool remember(uint64_t id);

  Options options_;
  uint64_t cursor_;
  bool syncing_ = false;
  bool resync_wanted_ = false;  // a gap or SYNC_NEEDED came during a SYNC: run another after it
  uint64_t sync_after_ = 0;     // the `after` of the next page of the current SYNC run
  std::string outstanding_ref_;
  uint64_t next_ref_ = 1;
  std::deque<ServerFrame> pending_;  // DELIVERs held back while syncing
  uint64_t sync_runs_ = 0;
  uint64_t gaps_ = 0;
  std::deque<uint64_t> recent_;              // the last dedup_window ids shown, oldest first
  std::unordered_set<uint64_t> recent_set_;  // the same, to look up
  uint64_t duplicates_ = 0;
};

// The loop over a Client that queues frames (no on_frame callback). Not thread-safe.
class MailboxFollower {
 public:
  MailboxFollower(Client& client, MailboxFeed::Options options)
      : client_(client), feed_(std::move(options)) {}

  // Sends the first SYNC (see MailboxFeed::start).
  void start();
  // Handles the next frame of the loop arriving within `wait` and returns the entries to show, in order
  // (often none: a buffered push, a SYNC page of a run that goes on). Timeout if no such frame came;
  // Transport if the connection closed; our SYNC's refusal as "SYNC: <CODE>: <message>"; an unsolicited
  // ERROR (e.g. an expired token) as Transport "<CODE>: <message>".
  Result<std::vector<Entry>> next(std::chrono::milliseconds wait);
  // A SYNC from the cursor (pull mode polls with it).
  void resync();

  const MailboxFeed& feed() const { return feed_; }
  uint64_t cursor() const { return feed_.cursor(); }

 private:
  Result<std::vector<Entry>> act(MailboxFeed::Actions a);
  Client& client_;
  MailboxFeed feed_;
};

}  // namespace qim::client
