// qimctl block, unblock, blocks, mute, unmute, delete (docs/protocol.md "Blocking", "Mute", "Delete for me").
#include <ostream>

#include "core/conversation.h"
#include "ctl/commands.h"
#include "ctl/format.h"

namespace qim::ctl {

namespace {

std::string mute_text(const client::ServerFrame& f) {
  if (!f.muted) return "-";
  return f.muted_until ? std::to_string(*f.muted_until) : "forever";
}

}  // namespace

int run_privacy(const PrivacyCommand& r, std::ostream& out, std::ostream& err) {
  const bool about_user = r.action == "block" || r.action == "unblock";
  if (about_user) {
    if (auto u = UserId::parse(r.user); !u.ok()) return fail(err, r.action, u.error());
  }
  const bool user_named = r.conversation.find(':') == std::string::npos;
  if (!about_user && r.action != "blocks") {
    if (user_named) {
      if (auto u = UserId::parse(r.conversation); !u.ok()) return fail(err, r.action, u.error());
    } else if (auto c = Conversation::parse(r.conversation); !c.ok()) {
      return fail(err, r.action, c.error());
    }
  }
  auto session = open_session(r.connection);
  if (!session.ok()) return fail(err, session.error());
  client::Client& c = *session->client;
  if (about_user) {
    auto ok = c.block(r.user, r.action == "block");
    if (!ok.ok()) return fail(err, r.action + " " + r.user, ok.error());
    out << "user=" << ok->user << " blocked=" << (ok->blocked ? "true" : "false") << '\n';
    return 0;
  }
  if (r.action == "blocks") {
    auto list = c.blocks();
    if (!list.ok()) return fail(err, "blocks", list.error());
    if (list->users.empty()) out << "(no blocks)\n";
    for (const auto& u : list->users) out << "user=" << u << '\n';
    return 0;
  }
  std::string conversation = r.conversation;
  if (user_named) {
    auto id = direct_conversation(session->auth_ok.user, r.conversation);
    if (!id.ok()) return fail(err, r.action, id.error());
    conversation = *id;
  }
  if (r.action == "mute" || r.action == "unmute") {
    auto ok = c.mute(conversation, r.action == "mute", r.until_ms);
    if (!ok.ok()) return fail(err, r.action + " " + conversation, ok.error());
    out << "conversation=" << ok->conversation << " muted=" << (ok->muted ? "true" : "false")
        << " muted_until=" << mute_text(*ok) << '\n';
    return 0;
  }
  auto ok = c.delete_for_me(conversation, r.message_id);
  if (!ok.ok()) return fail(err, "delete " + conversation, ok.error());
  if (ok->through) {
    out << "conversation=" << ok->conversation << " deleted_through=" << *ok->through << '\n';
  } else {
    out << "conversation=" << ok->conversation << " deleted=" << ok->message_id << '\n';
  }
  return 0;
}

}  // namespace qim::ctl
