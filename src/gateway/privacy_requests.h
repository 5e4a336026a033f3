#pragma once
// The gateway's side of blocking, mute and delete for me (docs/protocol.md "Blocking", "Mute", "Delete
// for me"; docs/adr/0096-0098). Every rule is Privacy's (inbox/privacy.h) or Inbox's; here is only the
// door's: who may ask, the answer, and the frame pushed to the caller's other connections (every gateway,
// through the SignalBus) so their devices follow at once: BLOCK_CHANGED, MUTE_CHANGED, DELETED_FOR_ME.
// A device that missed a push (it was offline, or the bounded signal queue dropped it) reads the state
// again: BLOCKS, CONVERSATIONS (muted_until; deleted conversations are left out), SYNC and HISTORY (deleted
// messages are left out).
//
// The functions block on store reads and writes: connections run them on their lane of the blocking pool
// (the inbox door), like SETTINGS.

#include <set>
#include <string>

#include "gateway/inbox_requests.h"
#include "gateway/protocol/privacy_frames.h"
#include "gateway/protocol/server_frame.h"
#include "mailbox/message.h"

namespace qim {

// The answer to one privacy frame: BLOCK_OK, BLOCKS_LIST, MUTE_OK, DELETE_OK, or an ERROR: INVALID_ARGUMENT
// (blocking oneself, an until already over), FORBIDDEN (muting or deleting in a direct conversation the
// caller is not a party of), NOT_FOUND (DELETE_FOR_ME of a conversation without a visible entry of the
// caller's), RATE_LIMITED (over kMaxBlocks or kMaxHiddenCells), UNAVAILABLE, INTERNAL (logged).
std::string answer_privacy_frame(const InboxRequestDeps& deps, const std::string& ref,
                                 const InboxCaller& caller, const PrivacyFrame& frame);

// What a reader's SYNC and HISTORY pages show of privacy: entries the reader deleted for themselves are
// left out; entries sent by a user the reader blocks are flagged ("from_blocked"). Read once per page
// (two reads); the backend's error as it is (the page is then refused UNAVAILABLE: it never shows a
// deleted message).
struct ReaderPrivacy {
  std::set<UserId> blocks;
  HiddenSet hidden;
};
Result<ReaderPrivacy> reader_privacy(InboxBackend& backend, const UserId& reader);
// The marks of `p` for the page encoders (server_frame.h); `p` must outlive them.
ReaderMarks reader_marks(const ReaderPrivacy& p);
// Leaves the messages the reader deleted out of a HISTORY page, keeping where to page on from (the oldest
// message read, when the page had more).
void drop_deleted(HistoryPage& page, const ReaderPrivacy& p);

}  // namespace qim
