#pragma once
// A user's privacy state (issue 39, items 3, 6, 7; docs/adr/0096-0098): whom they block, which
// conversations they muted, which messages and conversations they deleted for themselves. The rules live
// here once; the gateway's frames (BLOCK, UNBLOCK, BLOCKS, MUTE, UNMUTE, DELETE_FOR_ME) and a later server
// API call these functions, Inbox reads mutes and deletions for the conversation list.
//
// Storage: per-user cells beside the inbox's settings (InboxBackend::put_setting: last writer wins by a
// version below 2^48, the server's time in ms; a blind write on every engine, no read-modify-write, no LWT
// on CQL). Each kind of cell is kept in its own partition, the settings of a scoped owner
// "~<scope>~<user>" ('~' is not in the name alphabet: no real user's settings can collide with it), so a
// read of one kind (a user's block list) never reads the others and SETTINGS never sees them:
//
//   ~block~<blocker>     <target>                "1" blocked | "0" unblocked (kept: a later write wins)
//   ~blockedby~<target>  <blocker>               the same value: the reverse index, read by the checks
//                                                made for the sender (direct SEND, group add, typing)
//   ~mute~<user>         <conversation>          "" unmuted | "forever" | "<until ms>"
//   ~hide~<user>         <conversation>          "<message id>": deleted for me through this message
//                        <conversation>#<id>     "1": that one message deleted for me ("0": undone)
//
// Blocking writes the reverse cell first and the list second (unblocking the other way round): a failure
// between the two leaves the block enforced, never a listed block that is not (the caller gets the error
// and retries; both writes are idempotent).
//
// Thread-safe (the backend is). Errors are values: the backend's, InvalidArgument for a bad argument.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "core/conversation.h"
#include "core/ids.h"
#include "core/status.h"
#include "inbox/inbox_backend.h"

namespace qim {

// A user blocks at most this many users (a BLOCK past it: ResourceExhausted), so the one read a check
// costs stays small.
inline constexpr size_t kMaxBlocks = 1'000;
// Cells of deleted messages a user keeps (a DELETE_FOR_ME past it: ResourceExhausted; deleting a whole
// conversation is one cell whatever its length).
inline constexpr size_t kMaxHiddenCells = 10'000;

// A mute: for ever (no until), or until a time (ms since the epoch).
struct Mute {
  std::optional<int64_t> until_ms;
  // Whether it mutes at `now_ms`.
  bool active(int64_t now_ms) const { return !until_ms || *until_ms > now_ms; }
  bool operator==(const Mute&) const = default;
};

// What a user deleted for themselves.
class HiddenSet {
 public:
  // Whether `message` of `c` is hidden from its user.
  bool hides(const ConversationId& c, MessageId message) const;
  // The message through which the whole of `c` is hidden (none: no deletion of the conversation).
  std::optional<MessageId> through(const ConversationId& c) const;
  bool empty() const { return through_.empty() && messages_.empty(); }
  // Every conversation with something hidden (a list reads their rows whatever `before`: hiding moves a
  // conversation's last entry down).
  std::set<ConversationId> conversations() const;

 private:
  friend class Privacy;
  std::map<ConversationId, MessageId> through_;
  std::set<std::pair<ConversationId, MessageId>> messages_;
};

class Privacy {
 public:
  // `backend` must outlive the Privacy.
  explicit Privacy(InboxBackend& backend) : backend_(backend) {}

  // --- Blocking (item 6) ---
  // `blocker` blocks / unblocks `target` at `version` (the server's time in ms; the later version wins).
  // InvalidArgument for blocking oneself; ResourceExhausted over kMaxBlocks.
  Status block(const UserId& blocker, const UserId& target, int64_t version);
  Status unblock(const UserId& blocker, const UserId& target, int64_t version);
  // Whom `blocker` blocks, sorted. One read.
  Result<std::vector<UserId>> blocks(const UserId& blocker);
  // Who blocks `user` (the reverse index). One read: the checks made for a sender.
  Result<std::set<UserId>> blocked_by(const UserId& user);

  // --- Mute (item 7) ---
  // Mutes `c` for `user` until `until_ms` (none: for ever); unmute clears it. InvalidArgument for an until
  // not after `version` (a mute already over).
  Status mute(const UserId& user, const ConversationId& c, std::optional<int64_t> until_ms, int64_t version);
  Status unmute(const UserId& user, const ConversationId& c, int64_t version);
  // The user's mutes (expired ones included: Mute::active decides at a time). One read.
  Result<std::map<ConversationId, Mute>> mutes(const UserId& user);

  // --- Delete for me (item 3) ---
  // Hides `message` of `c` from `user`'s own views. ResourceExhausted over kMaxHiddenCells.
  Status hide_message(const UserId& user, const ConversationId& c, MessageId message, int64_t version);
  // Hides every message of `c` up to and including `through` from `user`'s own views (a later message
  // shows the conversation again). The cell is last-writer-wins like the others: the door passes the
  // conversation's latest message, so a later deletion names a later (or the same) message.
  Status hide_conversation(const UserId& user, const ConversationId& c, MessageId through, int64_t version);
  // What `user` deleted for themselves. One read.
  Result<HiddenSet> hidden(const UserId& user);

 private:
  InboxBackend& backend_;
};

}  // namespace qim
