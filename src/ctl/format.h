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
// system entry (client_msg_id "~group:<op>") ends "system=<its text>" instead, e.g. "system=bob added carol".
std::string entry_line(const client::Entry& e);
// A history message: "message_id=<id> from=<sender> time=<server_time> body=<body>" (or system=<text>).
std::string history_line(const client::Entry& m);
// A SEND_ACK: "message_id=<id> conversation=<c> server_time=<ms> duplicate=<true|false>".
std::string ack_line(const client::ServerFrame& ack);

// The one-to-one conversation of users a and b: "d:<smaller>:<larger>" (docs/protocol.md). InvalidArgument
// naming the problem if either is not a valid user id (e.g. holds ':').
Result<std::string> direct_conversation(std::string_view a, std::string_view b);

}  // namespace qim::ctl
