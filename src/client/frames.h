#pragma once
// The client's side of the protocol (docs/protocol.md): encoders of the frames a client sends, and a
// parser of the frames the server sends into one flat struct (fields a frame type does not carry stay
// empty).

#include <cstdint>
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
std::string send_to_conversation_frame(std::string_view conversation, std::string_view client_msg_id,
                                       std::string_view body, std::string_view ref = {});
std::string sync_frame(uint64_t after, uint32_t limit, std::string_view ref = {});
std::string history_frame(std::string_view conversation, std::optional<uint64_t> before, uint32_t limit,
                          std::string_view ref = {});
std::string ping_frame(std::string_view ref = {});

struct Entry {
  uint64_t seq = 0;  // mailbox_seq (0 in HISTORY_PAGE messages)
  uint64_t message_id = 0;
  std::string conversation;
  std::string sender;
  std::string sender_device;
  std::string client_msg_id;
  int64_t server_time = 0;
  std::string body;
};

struct ServerFrame {
  std::string type;  // AUTH_OK, SEND_ACK, DELIVER, SYNC_NEEDED, SYNC_PAGE, HISTORY_PAGE, ERROR, PONG
  std::string ref;
  std::string raw;  // the frame's JSON text
  // ERROR
  std::string code;
  std::string message;
  // AUTH_OK
  std::string user;
  std::string device;
  std::string delivery;
  // SEND_ACK (conversation also in HISTORY_PAGE)
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
};

// CorruptEntry naming the problem if the text is not a server frame of this protocol.
Result<ServerFrame> parse_server_frame(std::string_view text);

}  // namespace qim::client
