#include <ostream>

#include "ctl/commands.h"
#include "ctl/format.h"

namespace qim::ctl {

int run_history(const HistoryRequest& r, std::ostream& out, std::ostream& err) {
  auto session = open_session(r.connection);
  if (!session.ok()) return fail(err, session.error());
  const std::string conversation = direct_conversation(session->auth_ok.user, r.with);
  auto page = session->client->history(conversation, r.before, r.limit);
  if (!page.ok()) return fail(err, "history of " + conversation, page.error());
  for (const auto& m : page->entries) out << history_line(m) << '\n';
  if (page->more && !page->entries.empty())
    out << "more=true next_before=" << page->entries.back().message_id << '\n';
  return 0;
}

}  // namespace qim::ctl
