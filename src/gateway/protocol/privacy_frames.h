#pragma once
// The privacy frames (docs/protocol.md "Blocking", "Mute", "Delete for me"; docs/adr/0096-0098): BLOCK,
// UNBLOCK, BLOCKS, MUTE, UNMUTE, DELETE_FOR_ME a client sends, their answers, and the frames pushed to
// the user's other devices. Parsing checks only the wire form (a user id, a conversation id, an until in
// ms, a message id); every rule is Privacy's (inbox/privacy.h), called by gateway/privacy_requests.cc.
//
// Like client_frame.h the parser never throws: an error is INVALID_ARGUMENT naming the field.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "core/ids.h"
#include "inbox/privacy.h"

namespace simdjson::dom {
class object;
}

namespace qim {

// BLOCK {user} (blocked = true) / UNBLOCK {user} (blocked = false).
struct BlockFrame {
  UserId user;
  bool blocked = true;
};
// BLOCKS: the caller's block list.
struct BlocksFrame {};
// MUTE {conversation, until?} (muted = true; no until: for ever) / UNMUTE {conversation}.
struct MuteFrame {
  ConversationId conversation;
  bool muted = true;
  std::optional<int64_t> until_ms;
};
// DELETE_FOR_ME {conversation, message_id?}: one message, or (no message_id) the whole conversation.
struct DeleteForMeFrame {
  ConversationId conversation;
  std::optional<MessageId> message;
};

using PrivacyFrame = std::variant<BlockFrame, BlocksFrame, MuteFrame, DeleteForMeFrame>;

// Whether `type` names a privacy frame.
bool is_privacy_frame_type(std::string_view type);
// The frame of `type` (is_privacy_frame_type) read from `o`, or the message of an INVALID_ARGUMENT.
std::variant<PrivacyFrame, std::string> parse_privacy_frame(std::string_view type,
                                                            const simdjson::dom::object& o);

// --- Answers and pushes (64-bit ids as decimal strings, times in ms as numbers) ---

// BLOCK_OK (answer, with ref) / BLOCK_CHANGED (push to the user's other connections): {user, blocked}.
std::string encode_block(std::string_view type, std::string_view ref, const UserId& user, bool blocked);
// BLOCKS_LIST: {users: [...]}, sorted.
std::string encode_blocks_list(std::string_view ref, std::span<const UserId> users);
// MUTE_OK / MUTE_CHANGED: {conversation, muted, muted_until: ms | null (for ever, or not muted)}.
std::string encode_mute(std::string_view type, std::string_view ref, const ConversationId& c,
                        const std::optional<Mute>& mute);
// DELETE_OK / DELETED_FOR_ME: {conversation, message_id} for one message, {conversation, through} for the
// whole conversation through that message.
std::string encode_deleted(std::string_view type, std::string_view ref, const ConversationId& c,
                           std::optional<MessageId> message, std::optional<MessageId> through);

}  // namespace qim
