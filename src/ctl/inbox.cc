// qimctl conversations and qimctl read (docs/protocol.md "Inbox").
#include <ostream>

#include "core/conversation.h"
#include "ctl/commands.h"
#include "ctl/format.h"

namespace qim::ctl {

int run_conversations(const ConversationsRequest& r, std::ostream& out, std::ostream& err) {
  auto session = open_session(r.connection);
  if (!session.ok()) return fail(err, session.error());
  auto page = session->client->conversations(r.before, r.limit);
  if (!page.ok()) return fail(err, "conversations", page.error());
  if (page->conversations.empty()) out << "(no conversations)\n";
  for (const auto& c : page->conversations) out << conversation_line(c) << '\n';
  if (page->next_before) out << "more=true next_before=" << *page->next_before << '\n';
  out << "unread_conversations=" << page->unread_conversations << '\n';
  return 0;
}

int run_read(const ReadRequest& r, std::ostream& out, std::ostream& err) {
  // Checked before connecting: a name that cannot exist is the caller's mistake, not the server's. A
  // plain user names the direct conversation with them (known once the session says who we are).
  const bool user = r.conversation.find(':') == std::string::npos;
  if (user) {
    if (auto u = UserId::parse(r.conversation); !u.ok()) return fail(err, "read", u.error());
  } else if (auto c = Conversation::parse(r.conversation); !c.ok()) {
    return fail(err, "read", c.error());
  }
  if (r.seq == 0)
    return fail(err, "read", Error(Errc::kInvalidArgument, "seq must be a seq of your mailbox"));
  auto session = open_session(r.connection);
  if (!session.ok()) return fail(err, session.error());
  std::string conversation = r.conversation;
  if (user) {
    auto id = direct_conversation(session->auth_ok.user, r.conversation);
    if (!id.ok()) return fail(err, "read", id.error());
    conversation = *id;
  }
  auto ok = session->client->read(conversation, r.seq);
  if (!ok.ok()) return fail(err, "read " + conversation, ok.error());
  out << read_line(*ok) << '\n';
  return 0;
}

}  // namespace qim::ctl
