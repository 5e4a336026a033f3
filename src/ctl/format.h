#pragma once
// How qimctl prints what the server says: one line per message, `key=value` fields, so the output can be
// read by people and by `grep`/`awk`. Bodies are escaped so one message is always exactly one line.

#include <cstdint>
#include <string>
#include <string_view>

#include "client/frames.h"
#include "core/status.h"

namespace qim::ctl {

// `body` with backslash, newline, carriage return, tab and other control bytes escaped (`\\`, `\n`, `\r`,
// `\t`, `\xHH`); everything else, UTF-8 included, unchanged.
std::string escape_body(std::string_view body);

// A mailbox entry (SYNC or DELIVER): "seq=<seq> from=<sender> conversation=<c> body=<body>"; a group's
// system entry (client_msg_id "~group:<op>") ends "system=<its text>" instead, e.g. "system=bob added carol";
// an edit "edit=<target> edits=<n> body=<new body>", a recall "recall=<target>" (another system entry:
// "system=<its body>"); an entry from a user the reader blocks (in a group) ends " from_blocked".
std::string entry_line(const client::Entry& e);
// A history message: "message_id=<id> from=<sender> time=<server_time> body=<body>" (or system=<text>).
std::string history_line(const client::Entry& m);
// A SEND_ACK: "message_id=<id> conversation=<c> server_time=<ms> duplicate=<true|false>".
std::string ack_line(const client::ServerFrame& ack);

// An unread count as shown: "<n>", or "999+" when capped.
std::string unread_text(uint32_t unread, bool capped);
// A CONVERSATIONS item: "conversation=<c> peer=<user>" (a group: "group=<name>") " unread=<n> read_seq=<seq>
// last_seq=<seq> from=<sender> time=<ms>", then " peer_read=<id>" and " delivered=<id>" when known, then
// " body=<preview>" (escaped as escape_body).
std::string conversation_line(const client::ConversationItem& c);
// READ_OK: "conversation=<c> read_seq=<seq> unread=<n>".
std::string read_line(const client::ServerFrame& ok);

// The one-to-one conversation of users a and b: "d:<smaller>:<larger>" (docs/protocol.md). InvalidArgument
// naming the problem if either is not a valid user id (e.g. holds ':').
Result<std::string> direct_conversation(std::string_view a, std::string_view b);

}  // namespace qim::ctl
