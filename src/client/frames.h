#pragma once
// The client's side of the protocol (docs/protocol.md): encoders of the frames a client sends, and a
// parser of the frames the server sends into one flat struct (fields a frame type does not carry stay
// empty).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace qim::client {

std::string auth_frame(std::string_view token, std::string_view ref = {});
// `to` names a user; use send_to_conversation_frame for a conversation id.
std::string send_frame(std::string_view to, std::string_view client_msg_id, std::string_view body,
                       std::string_view ref = {});
// A SEND to `conversation` replying to `reply_to` (docs/protocol.md "Replies").
std::string reply_frame(std::string_view conversation, std::string_view client_msg_id, std::string_view body,
                        uint64_t reply_to, std::string_view ref);
std::string send_to_conversation_frame(std::string_view conversation, std::string_view client_msg_id,
                                       std::string_view body, std::string_view ref = {});
std::string sync_frame(uint64_t after, uint32_t limit, std::string_view ref = {});
// EDIT and RECALL of the message `message_id` of `conversation` (docs/protocol.md "Editing and recalling").
std::string edit_frame(std::string_view conversation, uint64_t message_id, std::string_view client_msg_id,
                       std::string_view body, std::string_view ref = {});
std::string recall_frame(std::string_view conversation, uint64_t message_id, std::string_view client_msg_id,
                         std::string_view ref = {});
// REACT (add) or UNREACT (remove) the reaction `emoji` (one emoji or a short code such as ":thumbs_up:") on
// the message `message_id` of `conversation` (docs/protocol.md "Reactions").
std::string react_frame(std::string_view conversation, uint64_t message_id, std::string_view client_msg_id,
                        std::string_view emoji, bool remove = false, std::string_view ref = {});
std::string history_frame(std::string_view conversation, std::optional<uint64_t> before, uint32_t limit,
                          std::string_view ref = {});
std::string ping_frame(std::string_view ref = {});
// A group frame (docs/protocol.md "Groups"): `type` GROUP_CREATE, GROUP_ADD, GROUP_REMOVE, GROUP_LEAVE,
// GROUP_RENAME, GROUP_ROLE, GROUPS or GROUP_MEMBERS; each of the other fields is written only when
// non-empty (`members` always for GROUP_CREATE, GROUP_ADD, GROUP_REMOVE).
struct GroupRequestFields {
  std::string group;                 // "g:<id>"
  std::vector<std::string> members;  // users
  std::string name;
  std::string member;  // GROUP_ROLE
  std::string role;    // GROUP_ROLE: "admin" | "member"
};
std::string group_frame(std::string_view type, const GroupRequestFields& fields, std::string_view ref = {});

// Inbox frames (docs/protocol.md "Inbox"). READ: `seq` of the user's own mailbox.
std::string read_frame(std::string_view conversation, uint64_t seq, std::string_view ref = {});
// CONVERSATIONS: the newest page when `before` is none; `limit` 1..200.
std::string conversations_frame(std::optional<uint64_t> before, uint32_t limit, std::string_view ref = {});
std::string receipts_frame(std::string_view conversation, uint64_t message_id, std::string_view ref = {});
// SETTINGS: writes the settings given (none: a read). receipts "on"|"off"; presence
// "everyone"|"contacts"|"nobody".
struct SettingsFields {
  std::optional<std::string> receipts;
  std::optional<std::string> presence;
};
std::string settings_frame(const SettingsFields& fields, std::string_view ref = {});

struct Entry {
  uint64_t seq = 0;  // mailbox_seq (0 in HISTORY_PAGE messages)
  uint64_t message_id = 0;
  std::string conversation;
  std::string sender;
  std::string sender_device;
  std::string client_msg_id;
  int64_t server_time = 0;
  std::string body;
  // Privacy marks for the reader (docs/protocol.md "Blocking", "Delete for me"): a SYNC stub of a message
  // the reader deleted (no sender, no body), and a message from a user the reader blocks.
  bool deleted_for_me = false;
  bool from_blocked = false;
  // HISTORY_PAGE (docs/protocol.md "Editing and recalling"): the message was recalled (body empty), or
  // edited (the body is the current one).
  bool recalled = false;
  int64_t edited_at = 0;
  uint32_t edit_count = 0;
  // HISTORY_PAGE (docs/protocol.md "Reactions"): counts per reaction, `mine` when the reader holds it.
  struct Reaction {
    std::string emoji;
    uint32_t count = 0;
    bool mine = false;
  };
  std::vector<Reaction> reactions;
  // A reply (docs/protocol.md "Replies"): the message it replies to, and in HISTORY_PAGE its quote.
  std::optional<uint64_t> reply_to;
  struct Quote {
    uint64_t message_id = 0;
    std::string sender;
    std::string body;
    bool truncated = false;
    bool recalled = false;
    bool unavailable = false;
  };
  std::optional<Quote> quote;
};

// One conversation of a CONVERSATIONS_PAGE.
struct ConversationItem {
  std::string conversation;
  std::string kind;  // "direct" | "group"
  std::string peer;  // direct: the other user
  std::string name;  // group: its name (empty if unknown)
  Entry last;        // its latest entry; `body` is a preview (the first 200 bytes)
  uint64_t read_seq = 0;
  uint32_t unread = 0;
  bool unread_capped = false;                      // more than 999: show "999+"
  std::optional<uint64_t> peer_read_through;       // direct: the peer's receipt
  std::optional<uint64_t> peer_delivered_through;  // direct: the latest message the peer's mailbox holds
  bool muted = false;                              // the user muted it (no badge)
  std::optional<int64_t> muted_until;              // ms; none with `muted`: for ever
};

struct ServerFrame {
  std::string type;  // AUTH_OK, SEND_ACK, DELIVER, SYNC_NEEDED, SYNC_PAGE, HISTORY_PAGE, ERROR, PONG, ...
  std::string ref;
  std::string raw;  // the frame's JSON text
  // ERROR
  std::string code;
  std::string message;
  // AUTH_OK
  std::string user;
  std::string device;
  std::string delivery;
  // SEND_ACK (conversation also in HISTORY_PAGE; EDIT_ACK and RECALL_ACK too, with `target`)
  uint64_t target = 0;
  std::string client_msg_id;
  uint64_t message_id = 0;
  std::string conversation;
  int64_t server_time = 0;
  bool duplicate = false;
  // DELIVER, SYNC_PAGE (entries), HISTORY_PAGE (messages, as entries with seq 0)
  std::vector<Entry> entries;
  // DELIVER: the frame holds every entry of the mailbox in (from, frontier]; absent from an older server.
  std::optional<uint64_t> from;
  uint64_t frontier = 0;  // DELIVER, SYNC_PAGE
  // SYNC_NEEDED
  std::string reason;
  uint64_t trim = 0;
  std::optional<uint64_t> gap_through;
  bool more = false;
  // HISTORY_PAGE with more: the id to send as `before` for the next page.
  std::optional<uint64_t> next_before;
  // GROUP_OK (group, op), GROUPS_LIST (items: group, name, role, members), GROUP_MEMBERS_LIST (group, name;
  // items: user as id, role)
  std::string group;
  std::string op;
  std::string name;
  struct Item {
    std::string id;
    std::string name;
    std::string role;
    uint64_t members = 0;
  };
  std::vector<Item> items;
  // Inbox: READ_OK and READ_STATE (conversation, read_seq, unread, unread_capped); RECEIPT (conversation,
  // user, read_through); DELIVERED (conversation, user, message_id); CONVERSATIONS_PAGE (conversations,
  // next_before, unread_conversations, unread_conversations_capped); RECEIPTS_PAGE (conversation, message_id,
  // read_count, readers: none when the group is too large to list); SETTINGS_OK (settings).
  uint64_t read_seq = 0;
  uint32_t unread = 0;
  bool unread_capped = false;
  std::optional<uint64_t> read_through;
  std::vector<ConversationItem> conversations;
  uint32_t unread_conversations = 0;
  bool unread_conversations_capped = false;
  uint32_t read_count = 0;
  std::optional<std::vector<std::string>> readers;
  std::map<std::string, std::string> settings;
  // Privacy (privacy_fields.h): BLOCK_OK / BLOCK_CHANGED (user, blocked); BLOCKS_LIST (users); MUTE_OK /
  // MUTE_CHANGED (conversation, muted, muted_until); DELETE_OK / DELETED_FOR_ME (conversation, message_id
  // or through).
  bool blocked = false;
  std::vector<std::string> users;
  bool muted = false;
  std::optional<int64_t> muted_until;
  std::optional<uint64_t> through;
};

// CorruptEntry naming the problem if the text is not a server frame of this protocol.
Result<ServerFrame> parse_server_frame(std::string_view text);

}  // namespace qim::client
