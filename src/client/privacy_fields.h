#pragma once
// The client's side of the privacy frames (docs/protocol.md "Blocking", "Mute", "Delete for me"): the
// frames it sends, and the fields of ServerFrame their answers and pushes fill (fields a frame does not
// carry stay empty).

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "client/frames.h"

namespace qim::client {

// BLOCK {user} when `blocked`, else UNBLOCK {user}.
std::string block_frame(std::string_view user, bool blocked, std::string_view ref = {});
std::string blocks_frame(std::string_view ref = {});
// MUTE {conversation, until?} when `muted` (no until: for ever), else UNMUTE {conversation}.
std::string mute_frame(std::string_view conversation, bool muted, std::optional<int64_t> until_ms,
                       std::string_view ref = {});
// DELETE_FOR_ME {conversation, message_id?}: one message, or the whole conversation.
std::string delete_for_me_frame(std::string_view conversation, std::optional<uint64_t> message_id,
                                std::string_view ref = {});

void read_privacy_fields(const simdjson::dom::object& o, ServerFrame& f);

}  // namespace qim::client
