#pragma once
// The inbox (docs/adr/0068): a user's conversation list, read state and unread counts, as functions of
// the user's mailbox. Its rules live here once, over a thin InboxBackend, and every door (the WebSocket
// frames of src/gateway/, the server API) calls them:
//
//  - visible: an entry counts, and a row is shown, only at or below its own epoch's frontier and above
//    the user's trim (MailboxStore::visibility), exactly as read_mailbox shows entries;
//  - unread(user, c) = the visible entries of c in the user's mailbox above the user's read mark of c that
//    count (unread_rule.h: not sent by the user, not a system entry), exact up to kUnreadCap;
//  - a read mark only rises; a READ above the frontier is clamped to the last visible entry of c;
//  - a receipt (the message id a user has read through, per conversation) rises with the read mark, and
//    only for a conversation the user has a visible entry of, so a non-member can never appear as a reader.
//
// Thread-safe (the backend and the mailbox store are). Errors are values: the backend's or the store's,
// InvalidArgument for a limit out of range or a malformed conversation.

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "inbox/activity_walk.h"
#include "inbox/inbox_backend.h"
#include "inbox/privacy.h"
#include "mailbox/store.h"

namespace qim {

// Counts stop here: a client shows "999+" when `unread_capped`.
inline constexpr uint32_t kUnreadCap = 999;
// unread_conversations stops here: a client shows "99+" when `unread_conversations_capped` (the count
// walks the activity index newest first and stops past the cap: docs/adr/0089).
inline constexpr uint32_t kUnreadConversationsCap = 99;

struct ConversationSummary {
  ConversationId conversation;
  InboxEntryRef last;  // the latest visible entry (preview, sender, time)
  MailboxSeq read_seq;
  uint32_t unread = 0;
  bool unread_capped = false;  // more than kUnreadCap
  // A direct conversation only: the peer's receipt (the highest message id the peer has read) and the
  // highest message of this conversation visible in the peer's mailbox ("delivered"). Unset when unknown
  // or when the peer has turned receipts off.
  std::optional<MessageId> peer_read_through;
  std::optional<MessageId> peer_delivered_through;
  // The user's mute of this conversation, when one is active (privacy.h; CONVERSATIONS' muted_until).
  std::optional<Mute> muted;
};

struct ConversationPage {
  std::vector<ConversationSummary> items;  // descending by last.seq
  std::optional<MailboxSeq> next_before;   // set when more: pass as `before` for the next page
  // Conversations with unread > 0 in the whole list, not muted, exact up to kUnreadConversationsCap.
  uint32_t unread_conversations = 0;
  bool unread_conversations_capped = false;  // more than kUnreadConversationsCap
};

struct ReadOutcome {
  MailboxSeq read_seq;                    // the mark after the call (never lower than before)
  bool moved = false;                     // this call raised it
  std::optional<MessageId> read_through;  // the message at the mark, if the user has one in c
};

// Per message of a conversation: how many members have read it and, for a small group, who.
struct MessageReceipts {
  uint32_t read_count = 0;
  std::optional<std::vector<UserId>> readers;  // only when the conversation has <= options.readers_max
};

struct InboxOptions {
  uint32_t readers_max = 100;  // QIM_RECEIPT_READERS_MAX
  // How many of a page's reads are issued at once by a backend that does not batch them (read_batch's
  // default: that many threads; the peers' visibilities are one batched call, docs/adr/0163): 1 for an
  // engine in the process (embedded, memory), more for one answering over the network.
  uint32_t page_parallelism = 1;
};

class Inbox {
 public:
  // Both must outlive the Inbox.
  Inbox(MailboxStore& mailbox, InboxBackend& backend, InboxOptions options = {});

  // The user's conversations by last visible activity, before `before` (exclusive; none: the newest),
  // at most `limit` (1..200).
  Result<ConversationPage> conversations(const UserId& user, std::optional<MailboxSeq> before,
                                         uint32_t limit);
  // The same, with the user's privacy applied at `now_ms` (privacy.h; two more reads): a conversation
  // the user deleted for themselves through its last entry is left out; a last entry the user deleted is
  // replaced by the latest one not deleted (looking back at most kHiddenLookback entries; none left: the
  // conversation is left out); a conversation muted at `now_ms` carries its mute and is not counted in
  // unread_conversations (its own unread count is still given).
  Result<ConversationPage> conversations(const UserId& user, std::optional<MailboxSeq> before, uint32_t limit,
                                         int64_t now_ms);
  // One conversation's summary; NotFound if the user has no visible entry of it.
  Result<ConversationSummary> conversation(const UserId& user, const ConversationId& c);
  // READ: raises the user's read mark of c to `seq` (clamped to c's last visible entry) and the user's
  // receipt in c with it (unless the user's "receipts" setting is "off": the mark still moves). NotFound
  // if the user has no visible entry of c (nothing to read, and no receipt for a non-member).
  Result<ReadOutcome> mark_read(const UserId& user, const ConversationId& c, MailboxSeq seq);
  // unread(user, c) with its cap flag.
  Result<std::pair<uint32_t, bool>> unread(const UserId& user, const ConversationId& c);
  // Who has read `message` of c: members whose receipt is >= message. `members` is the conversation's
  // current membership (the caller's: the group store or the direct pair), used to bound and filter.
  Result<MessageReceipts> message_receipts(const ConversationId& c, MessageId message,
                                           std::span<const UserId> members);

  InboxBackend& backend() { return backend_; }

  // How many entries back a list looks for a last entry the user did not delete.
  static constexpr uint32_t kHiddenLookback = qim::kHiddenLookback;

 private:
  Result<ConversationPage> list(const UserId& user, std::optional<MailboxSeq> before, uint32_t limit,
                                const ListPrivacy* privacy);
  // Each item's unread / unread_capped (from its last and read_seq) and, for a direct conversation, its
  // peer fields (nothing for a group or a note to self): one batch of backend reads for all the items.
  Status summarise(const UserId& user, const MailboxVisibility& vis, std::span<ConversationSummary> items);

  MailboxStore& mailbox_;
  InboxBackend& backend_;
  InboxOptions options_;
};

}  // namespace qim
