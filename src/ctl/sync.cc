#include <ostream>

#include "ctl/commands.h"
#include "ctl/format.h"

namespace qim::ctl {

int run_sync(const SyncRequest& r, std::ostream& out, std::ostream& err) {
  auto session = open_session(r.connection);
  if (!session.ok()) return fail(err, session.error());
  auto page = session->client->sync(r.after, r.limit);
  if (!page.ok()) return fail(err, "sync", page.error());
  uint64_t cursor = r.after;
  if (page->entries.empty()) out << "(no messages)\n";
  for (const auto& e : page->entries) {
    out << entry_line(e) << '\n';
    cursor = e.seq;
  }
  out << "cursor=" << cursor << " frontier=" << page->frontier << " more=" << (page->more ? "true" : "false");
  if (page->gap_through) out << " gap_through=" << *page->gap_through;
  out << '\n';
  return 0;
}

}  // namespace qim::ctl
