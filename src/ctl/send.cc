#include <unistd.h>

#include <chrono>
#include <ostream>

#include "core/ids.h"
#include "ctl/commands.h"
#include "ctl/format.h"

namespace qim::ctl {

namespace {
// Unique enough per invocation: a retry that must be deduplicated passes --client-id explicitly.
std::string fresh_client_msg_id() {
  auto ns = std::chrono::system_clock::now().time_since_epoch() / std::chrono::nanoseconds(1);
  return "qimctl-" + std::to_string(ns) + "-" + std::to_string(::getpid());
}
}  // namespace

int run_send(const SendRequest& r, std::ostream& out, std::ostream& err) {
  // Checked before connecting, with the same rules the gateway applies (docs/protocol.md, "Names").
  if (r.conversation.empty()) {
    if (auto to = UserId::parse(r.to); !to.ok()) return fail(err, "send --to", to.error());
  } else if (auto c = ConversationId::parse(r.conversation); !c.ok()) {
    return fail(err, "send --conversation", c.error());
  }
  if (!r.file.empty()) return run_send_file(r, out, err);
  auto session = open_session(r.connection);
  if (!session.ok()) return fail(err, session.error());
  const std::string id = r.client_msg_id.empty() ? fresh_client_msg_id() : r.client_msg_id;
  auto ack = r.conversation.empty() ? session->client->send(r.to, id, r.body)
                                    : session->client->send_to_conversation(r.conversation, id, r.body);
  if (!ack.ok()) return fail(err, "send", ack.error());
  out << ack_line(*ack) << '\n';
  return 0;
}

namespace {
int run_event(const EventRequest& r, bool edit, std::ostream& out, std::ostream& err) {
  const char* what = edit ? "edit" : "recall";
  if (auto c = ConversationId::parse(r.conversation); !c.ok())
    return fail(err, std::string(what) + " --conversation", c.error());
  auto session = open_session(r.connection);
  if (!session.ok()) return fail(err, session.error());
  const std::string id = r.client_msg_id.empty() ? fresh_client_msg_id() : r.client_msg_id;
  auto ack = edit ? session->client->edit(r.conversation, r.message_id, id, r.body)
                  : session->client->recall(r.conversation, r.message_id, id);
  if (!ack.ok()) return fail(err, what, ack.error());
  out << "message_id=" << ack->message_id << " target=" << ack->target
      << " conversation=" << ack->conversation << " server_time=" << ack->server_time << '\n';
  return 0;
}
}  // namespace

int run_edit(const EventRequest& r, std::ostream& out, std::ostream& err) {
  return run_event(r, true, out, err);
}

int run_recall(const EventRequest& r, std::ostream& out, std::ostream& err) {
  return run_event(r, false, out, err);
}

int run_react(const EventRequest& r, bool remove, std::ostream& out, std::ostream& err) {
  const char* what = remove ? "react --remove" : "react";
  if (auto c = ConversationId::parse(r.conversation); !c.ok())
    return fail(err, std::string(what) + " --conversation", c.error());
  auto session = open_session(r.connection);
  if (!session.ok()) return fail(err, session.error());
  const std::string id = r.client_msg_id.empty() ? fresh_client_msg_id() : r.client_msg_id;
  auto ack = session->client->react(r.conversation, r.message_id, id, r.body, remove);
  if (!ack.ok()) return fail(err, what, ack.error());
  out << "message_id=" << ack->message_id << " target=" << ack->target
      << " conversation=" << ack->conversation << " server_time=" << ack->server_time << '\n';
  return 0;
}

}  // namespace qim::ctl
