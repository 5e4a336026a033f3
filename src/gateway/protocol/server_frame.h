#pragma once
// Encoders of the frames the server sends (docs/protocol.md). Each returns the frame's JSON text.
// 64-bit values (message ids, mailbox sequences) are decimal strings; times are integers (ms).

#include <span>
#include <string>
#include <string_view>

#include "archiver/history_store.h"
#include "auth/token.h"
#include "gateway/protocol/wire_code.h"
#include "groups/membership.h"
#include "mailbox/message.h"
#include "mailbox/store.h"

namespace qim {

struct SendAck {
  std::string client_msg_id;
  MessageId message_id;
  ConversationId conversation;
  int64_t server_time_ms = 0;
  bool duplicate = false;  // an earlier SEND with this client_msg_id was acknowledged with these values
};

std::string encode_auth_ok(std::string_view ref, const Principal& who, std::string_view delivery_mode);
std::string encode_send_ack(std::string_view ref, const SendAck& ack);
// A push: `entries` are every entry of the recipient's mailbox with seq in (from, frontier].
std::string encode_deliver(std::span<const MailboxEntry> entries, MailboxSeq from, MailboxSeq frontier);
// The server could not push some entries of the recipient's mailbox: the client must SYNC from its cursor.
std::string encode_sync_needed(std::string_view reason);
std::string encode_sync_page(std::string_view ref, const MailboxPage& page);
std::string encode_history_page(std::string_view ref, const ConversationId& conversation,
                                const HistoryPage& page);
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
