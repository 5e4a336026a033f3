#include <ostream>

#include "core/ids.h"
#include "ctl/commands.h"
#include "ctl/format.h"

namespace qim::ctl {

int run_history(const HistoryRequest& r, std::ostream& out, std::ostream& err) {
  // Checked before connecting: a name that cannot exist is the caller's mistake, not the server's.
  if (!r.group.empty()) {
    auto c = Conversation::parse(r.group);
    if (!c.ok()) return fail(err, "history --group", c.error());
    if (c->group_id() == nullptr) {
      return fail(err, "history --group",
                  Error(Errc::kInvalidArgument, "'" + r.group + "' is not a group ('g:<group id>')"));
    }
  } else if (auto with = UserId::parse(r.with); !with.ok()) {
    return fail(err, "history --with", with.error());
  }
  auto session = open_session(r.connection);
  if (!session.ok()) return fail(err, session.error());
  std::string conversation = r.group;
  if (conversation.empty()) {
    auto id = direct_conversation(session->auth_ok.user, r.with);
    if (!id.ok()) return fail(err, "history --with", id.error());
    conversation = *id;
  }
  auto page = session->client->history(conversation, r.before, r.limit);
  if (!page.ok()) return fail(err, "history of " + conversation, page.error());
  if (page->entries.empty()) out << "(no messages)\n";
  for (const auto& m : page->entries) out << history_line(m) << '\n';
  if (page->more && !page->entries.empty())
    out << "more=true next_before=" << page->entries.back().message_id << '\n';
  return 0;
}

}  // namespace qim::ctl
