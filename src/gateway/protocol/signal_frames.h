#pragma once
// The frames of typing and presence (docs/protocol.md "Typing and presence", docs/adr/0080-0083):
// TYPING and PRESENCE_SUBSCRIBE from the client, TYPING, PRESENCE and PRESENCE_STATE from the server.
// Ephemeral: nothing here is stored.

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/ids.h"

namespace qim {

// How long a TYPING "start" holds on a client that hears nothing more (the sender repeats it while typing).
inline constexpr int64_t kTypingExpiresMs = 6'000;
// At most this many users per PRESENCE_SUBSCRIBE (the connection's explicit list; it replaces the last).
inline constexpr size_t kMaxPresenceSubscriptions = 256;

// C: {"type":"TYPING","conversation":"d:alice:bob"[,"state":"start"|"stop"]}
struct TypingFrame {
  ConversationId conversation;
  bool stop = false;
};

// C: {"type":"PRESENCE_SUBSCRIBE","ref":"p1","users":["carol","dave"]}: the connection's explicit list
// becomes these users (an empty list clears it); the direct peers stay subscribed implicitly.
struct PresenceSubscribeFrame {
  std::vector<UserId> users;  // distinct, at most kMaxPresenceSubscriptions
};

// Reads the fields of a TYPING or PRESENCE_SUBSCRIBE frame (`type` is one of the two); on a bad field,
// the message of the INVALID_ARGUMENT refusal.
std::variant<TypingFrame, PresenceSubscribeFrame, std::string> read_signal_frame(
    std::string_view type, const simdjson::dom::object& o);

// S: {"type":"TYPING","conversation":"...","user":"alice","state":"start","expires_in_ms":6000}
// (a "stop" carries expires_in_ms 0).
std::string encode_typing(const ConversationId& conversation, const UserId& user, bool stop);

// One user's presence as a watcher may see it.
struct PresenceView {
  UserId user;
  bool online = false;
  std::optional<int64_t> last_seen;  // ms since the epoch; none: never seen, or not to be shown
};
// S: {"type":"PRESENCE","user":"carol","status":"offline","last_seen":1800000000000}
std::string encode_presence(const PresenceView& view);
// S: {"type":"PRESENCE_STATE","ref":"p1","users":[{"user":..,"status":..,"last_seen":..},...]}; without a
// ref (empty) for the direct peers' state pushed after AUTH.
std::string encode_presence_state(std::string_view ref, std::span<const PresenceView> views);

}  // namespace qim
