// qimctl: the operator's and newcomer's command line for a QIM gateway (send, listen, history, sync,
// group, conversations, read).
// Output is one line per message in key=value form (ctl/format.h); errors go to stderr with exit code 1.
#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <iostream>
#include <vector>

#include "ctl/commands.h"
#include "ctl/usage.h"

namespace {

// Set by SIGINT/SIGTERM: `listen` then prints its cursor and exits 0. A signal handler can reach nothing
// but a static, hence the one global of this program.
std::atomic<bool> stop_requested{false};
void on_stop_signal(int) {
  stop_requested.store(true);
}

// --url and --token on every subcommand (flags before the subcommand would read worse in the examples).
void connection_flags(CLI::App* cmd, qim::ctl::Connection& c) {
  cmd->add_option("--url", c.url, "gateway WebSocket URL")->envname("QIM_URL")->capture_default_str();
  cmd->add_option("--ca", c.ca_file, "wss://: PEM certificate(s) to trust, e.g. the dev certificate")
      ->envname("QIM_TLS_CA");
  cmd->add_option("--token", c.token, "access token, e.g. from `qim token`")
      ->envname("QIM_TOKEN")
      ->required();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"qimctl: talk to a QIM gateway as one user (docs/two-clients.md has a walk-through)"};
  app.require_subcommand(1);

  qim::ctl::SendRequest send;
  auto* send_cmd = app.add_subcommand("send", "send one message and print its SEND_ACK");
  connection_flags(send_cmd, send.connection);
  auto* to = send_cmd->add_option("--to", send.to, "the recipient user: 1..64 bytes of [A-Za-z0-9_.@-]");
  auto* conv =
      send_cmd->add_option("--conversation", send.conversation,
                           "a conversation id, d:<a>:<b> with a before b bytewise, e.g. d:alice:bob");
  to->excludes(conv);
  send_cmd->add_option("--client-id", send.client_msg_id, "idempotency key (default: a fresh one)");
  send_cmd
      ->add_option("--file", send.file, "attach this file (uploaded to the object store); text: its caption")
      ->check(CLI::ExistingFile);
  send_cmd->add_option("--type", send.content_type, "--file's content type (default: from its extension)");
  send_cmd->add_option("text", send.body, "the message body (with --file: an optional caption)");
  send_cmd->callback([&] {
    if (send.to.empty() && send.conversation.empty()) throw CLI::RequiredError("--to or --conversation");
    if (send.file.empty() && send_cmd->get_option("text")->count() == 0) throw CLI::RequiredError("text");
  });

  qim::ctl::EventRequest edit;
  auto* edit_cmd = app.add_subcommand("edit", "edit a message you sent and print its EDIT_ACK");
  connection_flags(edit_cmd, edit.connection);
  edit_cmd->add_option("--conversation", edit.conversation, "the message's conversation id")->required();
  edit_cmd->add_option("--message", edit.message_id, "the message id (its SEND_ACK's message_id)")
      ->required();
  edit_cmd->add_option("--client-id", edit.client_msg_id, "idempotency key (default: a fresh one)");
  edit_cmd->add_option("text", edit.body, "the new body")->required();
  qim::ctl::EventRequest recall;
  auto* recall_cmd =
      app.add_subcommand("recall", "recall (unsend for everyone) a message; prints RECALL_ACK");
  connection_flags(recall_cmd, recall.connection);
  recall_cmd->add_option("--conversation", recall.conversation, "the message's conversation id")->required();
  recall_cmd->add_option("--message", recall.message_id, "the message id (its SEND_ACK's message_id)")
      ->required();
  recall_cmd->add_option("--client-id", recall.client_msg_id, "idempotency key (default: a fresh one)");
  qim::ctl::EventRequest react;
  bool unreact = false;
  auto* react_cmd = app.add_subcommand(
      "react", "add (or with --remove take back) a reaction to a message; prints REACT_ACK / UNREACT_ACK");
  connection_flags(react_cmd, react.connection);
  react_cmd->add_option("--conversation", react.conversation, "the message's conversation id")->required();
  react_cmd->add_option("--message", react.message_id, "the message id (its SEND_ACK's message_id)")
      ->required();
  react_cmd->add_option("--client-id", react.client_msg_id, "idempotency key (default: a fresh one)");
  react_cmd->add_flag("--remove", unreact, "take the reaction back (UNREACT)");
  react_cmd->add_option("emoji", react.body, "one emoji, or a short code such as :thumbs_up:")->required();

  qim::ctl::DownloadRequest download;
  auto* download_cmd =
      app.add_subcommand("download", "download one attachment of a message (to -o PATH, or to stdout)");
  connection_flags(download_cmd, download.connection);
  download_cmd->add_option("--conversation", download.conversation, "the message's conversation id")
      ->required();
  download_cmd->add_option("--message", download.message_id, "the message id")->required();
  download_cmd->add_option("--attachment", download.attachment, "the attachment id (from the message's body)")
      ->required();
  download_cmd->add_option("-o,--output", download.output, "write the file here (default: stdout)");
  download_cmd->add_flag("--thumbnail", download.thumbnail, "the image's thumbnail instead");

  qim::ctl::ListenRequest listen;
  uint64_t count = 0;
  int64_t timeout_s = 0;
  auto* listen_cmd = app.add_subcommand(
      "listen", "SYNC from a cursor, then print pushed messages as they come, until Ctrl-C");
  connection_flags(listen_cmd, listen.connection);
  listen_cmd->add_option("--after", listen.after, "resume after this cursor (a seq; 0: from the oldest)")
      ->capture_default_str();
  auto* count_opt = listen_cmd->add_option("--count", count, "stop after N messages")
                        ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 62));
  auto* timeout_opt =
      listen_cmd->add_option("--timeout-s", timeout_s, "stop after S seconds (default: follow until Ctrl-C)")
          ->check(CLI::Range(int64_t{1}, int64_t{86400}));

  qim::ctl::HistoryRequest history;
  uint64_t before = 0;
  auto* history_cmd =
      app.add_subcommand("history", "one page of a conversation (one-to-one or group), newest first");
  connection_flags(history_cmd, history.connection);
  auto* with_opt =
      history_cmd->add_option("--with", history.with, "the other user: 1..64 bytes of [A-Za-z0-9_.@-]");
  auto* group_opt =
      history_cmd->add_option("--group", history.group, "a group you are a member of: g:<group id>");
  with_opt->excludes(group_opt);
  history_cmd->callback([&] {
    if (history.with.empty() && history.group.empty()) throw CLI::RequiredError("--with or --group");
  });
  history_cmd->add_option("--limit", history.limit, "messages per page")
      ->capture_default_str()
      ->check(CLI::Range(1, 200));
  auto* before_opt =
      history_cmd->add_option("--before", before, "page back from this message_id (exclusive)");

  qim::ctl::SyncRequest sync;
  auto* sync_cmd = app.add_subcommand("sync", "one SYNC page of your mailbox");
  connection_flags(sync_cmd, sync.connection);
  sync_cmd->add_option("--after", sync.after, "entries after this cursor (0: from the oldest)")
      ->capture_default_str();
  sync_cmd->add_option("--limit", sync.limit, "entries per page")
      ->capture_default_str()
      ->check(CLI::Range(1, 500));

  qim::ctl::GroupCommand group;
  auto* group_cmd =
      app.add_subcommand("group", "groups: create, add, remove, leave, rename, role, list, members");
  group_cmd->require_subcommand(1);
  struct Action {
    const char* name;
    const char* help;
    bool group, members, name_flag, role;
  };
  std::vector<CLI::App*> actions;
  for (const Action& a : std::initializer_list<Action>{
           {"create", "create a group (you are its owner) and print its id", false, true, true, false},
           {"add", "add members (admins and the owner)", true, true, false, false},
           {"remove", "remove members (admins and the owner)", true, true, false, false},
           {"leave", "leave a group", true, false, false, false},
           {"rename", "rename a group (admins and the owner)", true, false, true, false},
           {"role", "make a member admin or member (the owner)", true, false, false, true},
           {"list", "the groups you are a member of", false, false, false, false},
           {"members", "the members of a group", true, false, false, false}}) {
    auto* cmd = group_cmd->add_subcommand(a.name, a.help);
    connection_flags(cmd, group.connection);
    if (a.group) cmd->add_option("--group", group.fields.group, "the group, g:<group id>")->required();
    if (a.members) cmd->add_option("--member", group.fields.members, "a user (repeat for several)");
    if (a.name_flag) cmd->add_option("--name", group.fields.name, "the group's name")->required();
    if (a.role) {
      cmd->add_option("--member", group.fields.member, "the member")->required();
      cmd->add_option("--role", group.fields.role, "admin or member")
          ->required()
          ->check(CLI::IsMember({"admin", "member"}));
    }
    cmd->callback([&group, name = std::string(a.name)] { group.action = name; });
    actions.push_back(cmd);
  }

  qim::ctl::ConversationsRequest conversations;
  uint64_t conversations_before = 0;
  auto* conversations_cmd =
      app.add_subcommand("conversations", "your conversations by last activity, with unread counts");
  connection_flags(conversations_cmd, conversations.connection);
  conversations_cmd->add_option("--limit", conversations.limit, "conversations per page")
      ->capture_default_str()
      ->check(CLI::Range(1, 200));
  auto* conversations_before_opt = conversations_cmd->add_option(
      "--before", conversations_before, "the page before this seq (a previous page's next_before)");

  qim::ctl::ReadRequest read;
  auto* read_cmd = app.add_subcommand("read", "mark a conversation read up to a seq of your mailbox");
  connection_flags(read_cmd, read.connection);
  read_cmd
      ->add_option("conversation", read.conversation,
                   "a conversation id (d:<a>:<b>, g:<group id>) or a user (the direct conversation)")
      ->required();
  read_cmd
      ->add_option("seq", read.seq, "read up to and including this seq (from listen, sync, conversations)")
      ->required();

  // Privacy (docs/protocol.md "Blocking", "Mute", "Delete for me").
  qim::ctl::PrivacyCommand privacy;
  int64_t mute_until = 0;
  uint64_t delete_message = 0;
  CLI::Option* mute_until_opt = nullptr;
  CLI::Option* delete_message_opt = nullptr;
  std::vector<CLI::App*> privacy_cmds;
  for (const auto& [name, help] : std::initializer_list<std::pair<const char*, const char*>>{
           {"block", "block a user: their direct messages, group adds, typing and presence stop"},
           {"unblock", "unblock a user"},
           {"blocks", "the users you block"},
           {"mute", "mute a conversation (no badge), for ever or until --until"},
           {"unmute", "unmute a conversation"},
           {"delete", "delete a message (--message) or a whole conversation for yourself only"}}) {
    auto* cmd = app.add_subcommand(name, help);
    connection_flags(cmd, privacy.connection);
    const std::string n = name;
    if (n == "block" || n == "unblock") cmd->add_option("user", privacy.user, "the user")->required();
    if (n == "mute" || n == "unmute" || n == "delete")
      cmd->add_option("conversation", privacy.conversation,
                      "a conversation id (d:<a>:<b>, g:<group id>) or a user (the direct conversation)")
          ->required();
    if (n == "mute")
      mute_until_opt = cmd->add_option("--until", mute_until, "until this time (ms since the epoch)");
    if (n == "delete")
      delete_message_opt = cmd->add_option("--message", delete_message, "this message id only");
    cmd->callback([&privacy, n] { privacy.action = n; });
    privacy_cmds.push_back(cmd);
  }

  // An unknown command gets the list of commands, not CLI11's "argument was not expected".
  if (auto unknown = qim::ctl::unknown_command(app, "qimctl", argc, argv)) {
    std::cerr << *unknown;
    return static_cast<int>(CLI::ExitCodes::ExtrasError);
  }
  CLI11_PARSE(app, argc, argv);
  if (conversations_cmd->parsed()) {
    if (conversations_before_opt->count() > 0) conversations.before = conversations_before;
    return qim::ctl::run_conversations(conversations, std::cout, std::cerr);
  }
  if (read_cmd->parsed()) return qim::ctl::run_read(read, std::cout, std::cerr);
  for (auto* cmd : privacy_cmds) {
    if (!cmd->parsed()) continue;
    if (mute_until_opt != nullptr && mute_until_opt->count() > 0) privacy.until_ms = mute_until;
    if (delete_message_opt != nullptr && delete_message_opt->count() > 0) privacy.message_id = delete_message;
    return qim::ctl::run_privacy(privacy, std::cout, std::cerr);
  }
  if (group_cmd->parsed()) return qim::ctl::run_group(group, std::cout, std::cerr);
  if (send_cmd->parsed()) return qim::ctl::run_send(send, std::cout, std::cerr);
  if (edit_cmd->parsed()) return qim::ctl::run_edit(edit, std::cout, std::cerr);
  if (recall_cmd->parsed()) return qim::ctl::run_recall(recall, std::cout, std::cerr);
  if (react_cmd->parsed()) return qim::ctl::run_react(react, unreact, std::cout, std::cerr);
  if (download_cmd->parsed()) return qim::ctl::run_download(download, std::cout, std::cerr);
  if (listen_cmd->parsed()) {
    if (count_opt->count() > 0) listen.count = count;
    if (timeout_opt->count() > 0) listen.timeout = std::chrono::seconds(timeout_s);
    std::signal(SIGINT, on_stop_signal);
    std::signal(SIGTERM, on_stop_signal);
    listen.stop = &stop_requested;
    return qim::ctl::run_listen(listen, std::cout, std::cerr);
  }
  if (history_cmd->parsed()) {
    if (before_opt->count() > 0) history.before = before;
    return qim::ctl::run_history(history, std::cout, std::cerr);
  }
  return qim::ctl::run_sync(sync, std::cout, std::cerr);
}
