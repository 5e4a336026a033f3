#pragma once
// A user's conversations in list order (the seq of their latest visible entry, descending) read from the
// backend's activity index (docs/adr/0089), so a page costs about its own length in reads, not the whole
// list. The order and the rules equal a full sort of every row (Inbox's rules, inbox.h):
//
//  - a position is current when its conversation's row holds the same seq (others are stale: skipped, and
//    handed to the backend to forget), except below a row not visible: that row may have risen after the
//    positions were read (a call not acknowledged yet), so the conversation is resolved from it (decision
//    0169);
//  - a current row visible is the conversation's last entry; one not visible (above its epoch's frontier,
//    or at or below the trim) gives way to the conversation's highest visible index row, which is lower:
//    the conversation waits among the candidates until the scan has passed below it;
//  - a candidate is final once it is above every position not yet read (no conversation's last visible
//    entry lies above its row), so it is emitted then;
//  - with `before`, only the positions that can still land below it are read above it: those in the seq
//    ranges no epoch shows (rows not visible), and the conversations the user deleted entries of (privacy
//    may move their last entry down).
//
// Not thread-safe (one per call); the backend is.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "inbox/inbox_backend.h"
#include "inbox/privacy.h"
#include "mailbox/store.h"

namespace qim {

// The seq just below epoch e's first seq: each epoch's visible range is (below_epoch(e), F_e].
MailboxSeq below_epoch(Epoch e);

// The ranges (lo, hi] of index rows visible at or below `upto`, one per epoch that shows any, newest epoch
// first: last_visible reads them in that order.
std::vector<std::pair<MailboxSeq, MailboxSeq>> visible_ranges(const MailboxVisibility& vis, MailboxSeq upto);

// The highest visible index row of (user, c) at or below `upto`, newest epoch first.
Result<std::optional<InboxEntryRef>> last_visible(InboxBackend& backend, const UserId& user,
                                                  const ConversationId& c, const MailboxVisibility& vis,
                                                  MailboxSeq upto);

// How many entries back a list looks for a last entry the user did not delete.
inline constexpr uint32_t kHiddenLookback = 50;

// The privacy a list applies (Inbox::conversations with now_ms).
struct ListPrivacy {
  std::map<ConversationId, Mute> mutes;
  HiddenSet hidden;
  int64_t now_ms = 0;
};

// One conversation as the list shows it: its last visible entry (after privacy) and its mute.
struct ListedConversation {
  ConversationId conversation;
  InboxEntryRef last;
  std::optional<Mute> muted;
};

class ActivityWalk {
 public:
  // Positions read per backend call.
  static constexpr uint32_t kChunk = 64;

  // All must outlive the walk; `privacy` may be null.
  ActivityWalk(InboxBackend& backend, const UserId& user, const MailboxVisibility& vis,
               const ListPrivacy* privacy, std::optional<MailboxSeq> before);

  // The next conversation in list order (below `before`), nullopt when none is left.
  Result<std::optional<ListedConversation>> next();
  // Hands the stale positions met to the backend to forget (drop_stale_activity).
  Status finish();

 private:
  struct Desc {
    bool operator()(const std::pair<uint64_t, std::string>& a,
                    const std::pair<uint64_t, std::string>& b) const {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    }
  };
  // Reads the positions above `before` that may land below it (see above).
  Status prepare();
  // Reads the next chunk of positions below the cursor (and their rows).
  Status fetch();
  // Turns a position and its conversation's row into a candidate (or nothing).
  Status resolve(const ActivityPosition& p, const std::optional<InboxEntryRef>& row);
  // Resolves every position of (after, upto] read through in chunks (the pre-pass's ranges).
  Status resolve_range(MailboxSeq after, MailboxSeq upto);
  // The last entry the user is shown of c from `last` (privacy's look back), nullopt if none.
  Result<std::optional<InboxEntryRef>> apply_privacy(const ConversationId& c, InboxEntryRef last);

  InboxBackend& backend_;
  const UserId& user_;
  const MailboxVisibility& vis_;
  const ListPrivacy* privacy_;
  std::optional<MailboxSeq> before_;
  bool prepared_ = false;
  bool exhausted_ = false;
  MailboxSeq cursor_;  // positions below it (exclusive) are still to read
  std::deque<std::pair<ActivityPosition, std::optional<InboxEntryRef>>> pending_;
  std::map<std::pair<uint64_t, std::string>, ListedConversation, Desc> candidates_;
  std::set<ConversationId> resolved_;
  std::vector<ActivityPosition> stale_;
};

}  // namespace qim
