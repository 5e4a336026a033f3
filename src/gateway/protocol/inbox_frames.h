#pragma once
// The inbox frames (docs/protocol.md "Inbox", docs/adr/0076): READ, CONVERSATIONS, RECEIPTS and SETTINGS
// a client sends, their answers, and the signals the server pushes (READ_STATE, RECEIPT, DELIVERED).
// Parsing here checks only the wire form (types, ranges, the closed sets of setting values); every rule of
// the inbox (clamping, unread, who counts as a reader) is Inbox's (inbox/inbox.h).
//
// Like client_frame.h the parser never throws: an error is a wire code and a message naming the field.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "core/ids.h"
#include "core/mailbox_seq.h"
#include "gateway/protocol/privacy_frames.h"
#include "gateway/protocol/wire_code.h"
#include "inbox/inbox.h"

namespace simdjson::dom {
class object;
}

namespace qim {

inline constexpr uint32_t kDefaultConversationsLimit = 50;
inline constexpr uint32_t kMaxConversationsLimit = 200;  // Inbox::conversations' own bound

// The setting values a client may write (anything else is INVALID_ARGUMENT).
inline constexpr std::string_view kSettingReceipts = "receipts";  // "on" | "off"; default "on"
inline constexpr std::string_view kSettingPresence = "presence";  // "everyone" | "contacts" | "nobody"

// READ: the user has read `conversation` up to `seq` of their own mailbox.
struct ReadFrame {
  ConversationId conversation;
  MailboxSeq seq;
};
// CONVERSATIONS: a page of the user's conversations, by last activity, before `before` (exclusive).
struct ConversationsFrame {
  std::optional<MailboxSeq> before;
  uint32_t limit = kDefaultConversationsLimit;
};
// RECEIPTS: who has read `message` of `conversation`.
struct ReceiptsFrame {
  ConversationId conversation;
  MessageId message;
};
// SETTINGS: writes the settings present (none: a read), then answers all of them.
struct SettingsFrame {
  std::optional<std::string> receipts;
  std::optional<std::string> presence;
  bool writes() const { return receipts || presence; }
};

// The privacy frames (privacy_frames.h) go through the same door: one lane, one bound, one deadline.
using InboxFrame = std::variant<ReadFrame, ConversationsFrame, ReceiptsFrame, SettingsFrame, PrivacyFrame>;

// Whether `type` names an inbox frame (READ, CONVERSATIONS, RECEIPTS, SETTINGS).
bool is_inbox_frame_type(std::string_view type);

struct InboxFrameError {
  WireCode code = WireCode::kInvalidArgument;
  std::string message;
};
// The frame of `type` (is_inbox_frame_type) read from `o`, or INVALID_ARGUMENT naming the field: a missing
// or malformed conversation, seq or message_id; a limit outside 1..kMaxConversationsLimit; a setting value
// outside its set; an unknown key in SETTINGS (a mistyped setting would otherwise read as a plain read).
std::variant<InboxFrame, InboxFrameError> parse_inbox_frame(std::string_view type,
                                                            const simdjson::dom::object& o);

// The settings as answered: the stored values over the defaults (receipts "on", presence "everyone").
std::map<std::string, std::string> effective_settings(const std::map<std::string, std::string>& stored);

// --- Answers and signals (64-bit values as decimal strings, as everywhere in the protocol) ---

struct UnreadState {
  ConversationId conversation;
  MailboxSeq read_seq;
  uint32_t unread = 0;
  bool unread_capped = false;
};
std::string encode_read_ok(std::string_view ref, const UnreadState& s);
// To the reader's other connections after the mark moved.
std::string encode_read_state(const UnreadState& s);
// To the other members: `user` has read `conversation` through message `read_through`.
std::string encode_receipt(const ConversationId& conversation, const UserId& user, MessageId read_through);
// To a sender: `user`'s mailbox holds message `message` of direct `conversation` (and every earlier one).
std::string encode_delivered(const ConversationId& conversation, const UserId& user, MessageId message);

// What CONVERSATIONS says of one conversation beside its summary: its kind and peer or group name.
struct ConversationLabel {
  std::string kind;                      // "direct" | "group"
  std::optional<std::string> peer;       // direct: the other user (the user itself for a note to self)
  std::optional<std::string> peer_name;  // direct, with the user registry on: the peer's display name
  std::optional<std::string> name;       // group: its name (absent when the group store has none any more)
};
// `labels` has one label per item of `page.items`, in order.
std::string encode_conversations_page(std::string_view ref, const ConversationPage& page,
                                      std::span<const ConversationLabel> labels);
std::string encode_receipts_page(std::string_view ref, const ConversationId& conversation, MessageId message,
                                 const MessageReceipts& receipts);
std::string encode_settings_ok(std::string_view ref, const std::map<std::string, std::string>& settings);

}  // namespace qim
