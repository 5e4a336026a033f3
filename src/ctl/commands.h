#pragma once
// The qimctl subcommands. Each connects, authenticates, does one thing, prints it on `out` (one line per
// message, see format.h) and returns the process exit code: 0 on success, 1 with a message on `err` for
// any error (a bad URL, no connection, or an ERROR frame, printed as "<CODE>: <message>").

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "client/frames.h"
#include "ctl/session.h"

namespace qim::ctl {

struct SendRequest {
  Connection connection;
  std::string to;             // a user, or
  std::string conversation;   // a conversation id (exactly one of the two is set)
  std::string client_msg_id;  // the idempotency key; qimctl picks a fresh one when empty
  std::string body;
  std::string file;          // --file: attach this file (the body is then its caption)
  std::string content_type;  // --type: the declared type (default: from the file name's extension)
};
// Prints the SEND_ACK as ack_line(). With `file`: run_send_file.
int run_send(const SendRequest& r, std::ostream& out, std::ostream& err);
// ATTACH, the PUT of the file to the presigned URL, then a SEND referencing it (docs/protocol.md
// "Attachments"); prints ack_line() with " attachment=<id> size=<bytes>". A refusal as "<CODE>: ..."
// (ATTACHMENTS_DISABLED, UNSUPPORTED_TYPE, TOO_LARGE, ...), the store's refusal as its HTTP status.
int run_send_file(const SendRequest& r, std::ostream& out, std::ostream& err);

struct DownloadRequest {
  Connection connection;
  std::string conversation;
  uint64_t message_id = 0;
  std::string attachment;
  std::string output;  // empty or "-": the bytes go to `out`
  bool thumbnail = false;
};
// ATTACHMENT_URL, then the GET of the object: to `output` (then prints "saved=<path> size=<n>
// sha256=<hex>") or to `out`. UNKNOWN_ATTACHMENT for anything the user may not have.
int run_download(const DownloadRequest& r, std::ostream& out, std::ostream& err);

struct EventRequest {
  Connection connection;
  std::string conversation;   // the message's conversation id
  uint64_t message_id = 0;    // the message to change (its SEND_ACK's message_id)
  std::string client_msg_id;  // the idempotency key; qimctl picks a fresh one when empty
  std::string body;           // edit: the new body; react: the emoji or short code
};
// EDIT / RECALL (docs/protocol.md "Editing and recalling"): prints "message_id=<event id> target=<id>
// conversation=<c> server_time=<ms>".
int run_edit(const EventRequest& r, std::ostream& out, std::ostream& err);
int run_recall(const EventRequest& r, std::ostream& out, std::ostream& err);
// REACT, or UNREACT with `remove` (docs/protocol.md "Reactions"): prints the ACK as run_edit does.
int run_react(const EventRequest& r, bool remove, std::ostream& out, std::ostream& err);

struct ListenRequest {
  Connection connection;
  uint64_t after = 0;                           // the cursor to resume from (0: the oldest retained entry)
  std::optional<uint64_t> count;                // stop after this many messages (synced and pushed together)
  std::optional<std::chrono::seconds> timeout;  // stop after this long; none: until `stop` (Ctrl-C)
  const std::atomic<bool>* stop = nullptr;      // set (e.g. by SIGINT): print the cursor and return 0
};
// The client loop of docs/protocol.md (client::MailboxFollower): SYNCs from `after` until `more` is
// false, then prints pushed DELIVER entries as they come, SYNCing again when a push does not continue
// what was printed or the gateway sends SYNC_NEEDED (in pull mode it polls SYNC instead); every entry is
// printed once, in seq order. Follows until `count` messages, the timeout or `stop`, whichever comes first.
// Ends with "cursor=<seq>", the highest seq printed (or `after`), for a later `listen --after`. Returns 3 if
// `count` was set and not reached before the timeout, 0 otherwise (also when stopped).
int run_listen(const ListenRequest& r, std::ostream& out, std::ostream& err);

struct HistoryRequest {
  Connection connection;
  std::string with;   // the other user of the one-to-one conversation, or
  std::string group;  // a group, "g:<group id>" (exactly one of the two is set)
  uint32_t limit = 50;
  std::optional<uint64_t> before;  // page back from this message id (exclusive)
};
// One HISTORY page, newest first, as history_line() ("(no messages)" for none); then "more=true
// next_before=<id>" if older exist.
int run_history(const HistoryRequest& r, std::ostream& out, std::ostream& err);

struct SyncRequest {
  Connection connection;
  uint64_t after = 0;
  uint32_t limit = 100;
};
// One SYNC page as entry_line() ("(no messages)" for none), then "cursor=<last seq> frontier=<f>
// more=<bool>" (and gap_through).
int run_sync(const SyncRequest& r, std::ostream& out, std::ostream& err);

struct GroupCommand {
  Connection connection;
  // create | add | remove | leave | rename | role | list | members (docs/protocol.md "Groups")
  std::string action;
  client::GroupRequestFields fields;
};
// GROUP_OK as "group=<g:id> op=<op> message_id=<id>"; `list`: one "group=... role=... members=N name=..."
// line per group; `members`: one "user=... role=..." line per member.
int run_group(const GroupCommand& r, std::ostream& out, std::ostream& err);

struct ConversationsRequest {
  Connection connection;
  uint32_t limit = 50;             // 1..200
  std::optional<uint64_t> before;  // the page before this seq (a previous page's next_before)
};
// One CONVERSATIONS page, newest activity first, as conversation_line() ("(no conversations)" for none);
// then "more=true next_before=<seq>" if older exist; then "unread_conversations=<n>".
int run_conversations(const ConversationsRequest& r, std::ostream& out, std::ostream& err);

struct ReadRequest {
  Connection connection;
  std::string conversation;  // a conversation id (d:<a>:<b>, g:<id>), or a user: the direct one with them
  uint64_t seq = 0;          // a seq of your mailbox (from listen, sync or conversations' last_seq)
};
// READ: prints read_line() of READ_OK (the mark after the call: never lower than before).
int run_read(const ReadRequest& r, std::ostream& out, std::ostream& err);

struct PrivacyCommand {
  Connection connection;
  // block | unblock | blocks | mute | unmute | delete (docs/protocol.md "Blocking", "Mute", "Delete for me")
  std::string action;
  std::string user;                    // block, unblock
  std::string conversation;            // mute, unmute, delete: a conversation id, or a user (the direct one)
  std::optional<int64_t> until_ms;     // mute: until then (ms since the epoch); none: for ever
  std::optional<uint64_t> message_id;  // delete: this message; none: the whole conversation
};
// block/unblock: "user=<u> blocked=<bool>"; blocks: one "user=<u>" line per blocked user ("(no blocks)");
// mute/unmute: "conversation=<c> muted=<bool> muted_until=<ms|forever|->"; delete: "conversation=<c>
// deleted=<message id>" or "conversation=<c> deleted_through=<message id>".
int run_privacy(const PrivacyCommand& r, std::ostream& out, std::ostream& err);

}  // namespace qim::ctl
