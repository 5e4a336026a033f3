#pragma once
// The frames a client sends (docs/protocol.md), and their parser: the one place untrusted bytes become
// typed requests. The parser never throws and never crashes on any input (fuzzed by fuzz/run.sh); every
// refusal is a FrameError with a stable wire code and a message naming the problem.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/ids.h"
#include "core/mailbox_seq.h"
#include "gateway/protocol/attachment_frames.h"
#include "gateway/protocol/inbox_frames.h"
#include "gateway/protocol/signal_frames.h"
#include "gateway/protocol/wire_code.h"
#include "groups/group_op.h"
#include "outbox/message_event.h"

namespace qim {

inline constexpr int kProtocolVersion = 1;
inline constexpr size_t kMaxRefBytes = 64;
inline constexpr size_t kMaxClientMsgIdBytes = 64;
inline constexpr uint32_t kMaxSyncLimit = 500;
inline constexpr uint32_t kDefaultSyncLimit = 100;
inline constexpr uint32_t kMaxHistoryLimit = 200;
inline constexpr uint32_t kDefaultHistoryLimit = 50;

struct AuthFrame {
  std::string token;
};

// Exactly one of `to` and `conversation` is set. There is no sender field: the sender is the principal.
struct SendFrame {
  std::string client_msg_id;
  std::optional<UserId> to;
  std::optional<ConversationId> conversation;
  std::string body;  // may be empty only with attachments (the caption)
  // Uploads the message shows (docs/protocol.md "Attachments"): checked before the append; the stored body
  // is then attachments/message_body.h's JSON.
  std::vector<attachments::AttachmentRef> attachments;
  // The message of the same conversation this one replies to (docs/protocol.md "Replies"): checked by the
  // gateway against the Outbox before the append (send_request.h check_reply_target).
  std::optional<MessageId> reply_to;
};

struct SyncFrame {
  MailboxSeq after;  // zero: from the oldest retained entry
  uint32_t limit = kDefaultSyncLimit;
};

struct HistoryFrame {
  ConversationId conversation;
  std::optional<MessageId> before;
  uint32_t limit = kDefaultHistoryLimit;
};

struct PingFrame {};

// EDIT {client_msg_id, conversation, message_id, body} and RECALL {client_msg_id, conversation,
// message_id}: a change to a sent message of `conversation` (docs/protocol.md "Editing and recalling").
// REACT and UNREACT {client_msg_id, conversation, message_id, emoji} (docs/protocol.md "Reactions").
struct MessageEventFrame {
  MessageEventKind kind = MessageEventKind::kEdit;
  std::string client_msg_id;
  ConversationId conversation;
  MessageId target;
  std::string body;  // kEdit: the new body (not empty); kRecall: empty; kReact, kUnreact: the 'emoji'
};

// GROUP_CREATE, GROUP_ADD, GROUP_REMOVE, GROUP_LEAVE, GROUP_RENAME, GROUP_ROLE (a membership change),
// GROUPS and GROUP_MEMBERS (reads); docs/protocol.md "Groups".
enum class GroupRequest : uint8_t { kCreate, kAdd, kRemove, kLeave, kRename, kRole, kList, kMembers };

struct GroupFrame {
  GroupRequest request = GroupRequest::kList;
  GroupId group;                // every request but kCreate and kList: parsed from "g:<group id>"
  std::string name;             // kCreate, kRename: 1..kMaxGroupNameBytes
  std::vector<UserId> members;  // kCreate (0..), kAdd, kRemove (1..): distinct, at most kMaxUsersPerGroupOp;
                                // kRole: the one "member"
  GroupRole role = GroupRole::kMember;  // kRole: "member" or "admin"
};

struct ClientFrame {
  std::string ref;  // the client's correlation tag, echoed on the reply (empty if none)
  std::variant<AuthFrame, SendFrame, SyncFrame, HistoryFrame, PingFrame, GroupFrame, TypingFrame,
               PresenceSubscribeFrame, InboxFrame, MessageEventFrame, AttachmentFrame>
      body;
};

struct FrameError {
  WireCode code;
  std::string message;
  std::string ref;    // the frame's ref when it could be read
  bool auth = false;  // the frame was an AUTH frame (before AUTH, any other refused frame is UNAUTHENTICATED)
};

struct FrameLimits {
  size_t max_body_bytes = 16 * 1024;
};

// Reuses its simdjson buffers between frames; one per connection (not thread-safe).
class FrameParser {
 public:
  FrameParser();
  ~FrameParser();
  FrameParser(const FrameParser&) = delete;
  FrameParser& operator=(const FrameParser&) = delete;

  // A typed frame, or the error to send back. A frame with a repeated top-level key is refused with
  // INVALID_ARGUMENT naming the key; a JSON number beyond 64 bits with INVALID_ARGUMENT naming its field
  // (what is not a JSON number, such as -Infinity or NaN, is BAD_FRAME).
  std::variant<ClientFrame, FrameError> parse(std::string_view text, const FrameLimits& limits);
  // The frame's `ref` without reading the rest (one JSON pass, no field checked but `ref`; the frame is
  // already within the frame size limit): empty if the frame is not a JSON object or has no valid
  // (string, at most kMaxRefBytes, not repeated) ref.
  std::string peek_ref(std::string_view text);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace qim
