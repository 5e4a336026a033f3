#pragma once
// Encoders of the frames the server sends (docs/protocol.md). Each returns the frame's JSON text.
// 64-bit values (message ids, mailbox sequences) are decimal strings; times are integers (ms).
//
// The frames that carry messages (SYNC_PAGE, HISTORY_PAGE, DELIVER) are bounded by their encoded size as
// well as by their count: escapes make a message up to 6 times its stored size (a DEL byte is \u007f),
// so 500 entries of 16 KiB bodies were a 49 MB frame that clients refuse and that passed the connection's
// outbound byte bound in one piece. An encoder stops adding entries before the frame would pass
// max_bytes (a page then says `more`, a push is split into several), and always takes one: one entry is
// at most about 400 KiB (a 64 KiB body, the largest the gateway accepts, escaped), so with the default
// kMaxMessageFrameBytes no frame is larger than that bound.

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "archiver/history_store.h"
#include "auth/token.h"
#include "gateway/protocol/wire_code.h"
#include "groups/membership.h"
#include "mailbox/message.h"
#include "mailbox/store.h"
#include "outbox/message_event.h"

namespace qim {

// The largest SYNC_PAGE, HISTORY_PAGE or DELIVER the server sends (docs/protocol.md "Limits and closes").
inline constexpr size_t kMaxMessageFrameBytes = 1 << 20;

struct SendAck {
  std::string client_msg_id;
  MessageId message_id;
  ConversationId conversation;
  int64_t server_time_ms = 0;
  bool duplicate = false;  // an earlier SEND with this client_msg_id was acknowledged with these values
};

// What one reader's pages show of their privacy (gateway/privacy_requests.h): an entry `deleted` for the
// reader is written as a stub holding its place in the mailbox (seq, message_id, conversation,
// "deleted_for_me": true; no sender, no body), so cursors still move past it; an entry `from_blocked`
// (sent by a user the reader blocks) is written whole with "from_blocked": true.
struct ReaderMarks {
  std::function<bool(const Message&)> deleted;
  std::function<bool(const Message&)> from_blocked;
  // DELIVER: the quotes of the replies among the entries, by the reply's message id (reply_quotes.h).
  const std::map<uint64_t, ReplyQuote>* quotes = nullptr;
};
std::string encode_auth_ok(std::string_view ref, const Principal& who, std::string_view delivery_mode);
std::string encode_send_ack(std::string_view ref, const SendAck& ack);
// EDIT_ACK / RECALL_ACK: the event's own id (its Outbox position), the message it changes.
struct EventAck {
  MessageEventKind kind = MessageEventKind::kEdit;
  std::string client_msg_id;
  MessageId event_id;
  MessageId target;
  ConversationId conversation;
  int64_t server_time_ms = 0;
};
std::string encode_event_ack(std::string_view ref, const EventAck& ack);
// A push: `entries` are every entry of the recipient's mailbox with seq in (from, frontier]. One frame,
// whatever its size (benchmarks); the gateway uses encode_delivers.
std::string encode_deliver(std::span<const MailboxEntry> entries, MailboxSeq from, MailboxSeq frontier);
// The same push as frames of at most max_bytes (but one entry each at least), in order: each frame holds
// every entry in its own (from, frontier], the first starting at `from`, each next one where the last
// ended, the last ending at `frontier`. So a client of the loop applies them as one push.
// `marks` (only from_blocked is used): per recipient, entries from a user they block are flagged.
std::vector<std::string> encode_delivers(std::span<const MailboxEntry> entries, MailboxSeq from,
                                         MailboxSeq frontier, size_t max_bytes = kMaxMessageFrameBytes,
                                         const ReaderMarks* marks = nullptr);
// The server could not push some entries of the recipient's mailbox: the client must SYNC from its cursor.
std::string encode_sync_needed(std::string_view reason);
// At most max_bytes: the entries that fit (one at least); `more` is then true (the client asks again
// after the last seq it got).
std::string encode_sync_page(std::string_view ref, const MailboxPage& page,
                             size_t max_bytes = kMaxMessageFrameBytes, const ReaderMarks* marks = nullptr);
// At most max_bytes the same way. `next_before` is written whenever `more` is: the id to page back from
// (the last message written, or page.next_before when the page ends on messages the reader may not see).
// `marks`: only from_blocked is used (a reader's deleted messages are left out of the page by the caller).
std::string encode_history_page(std::string_view ref, const ConversationId& conversation,
                                const HistoryPage& page, size_t max_bytes = kMaxMessageFrameBytes,
                                const ReaderMarks* marks = nullptr);
std::string encode_error(std::string_view ref, WireCode code, std::string_view message);
std::string encode_pong(std::string_view ref);

// Groups (docs/protocol.md "Groups"). `op` is the wire name of the change ("create", "add", ...).
std::string encode_group_ok(std::string_view ref, std::string_view op, const GroupId& group, MessageId id);
struct GroupListing {
  GroupMeta meta;
  GroupRole role = GroupRole::kMember;  // the caller's
};
std::string encode_groups_list(std::string_view ref, std::span<const GroupListing> groups);
// `members`: current members, sorted by user.
std::string encode_group_members(std::string_view ref, const GroupMeta& meta,
                                 std::span<const GroupMemberRecord> members);

}  // namespace qim
