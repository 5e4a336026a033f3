#include <ostream>
#include <thread>

#include "client/mailbox_feed.h"
#include "ctl/commands.h"
#include "ctl/format.h"

namespace qim::ctl {

namespace {

using Clock = std::chrono::steady_clock;
// How often pull mode asks again; pushes make this unnecessary in the other modes.
constexpr std::chrono::milliseconds kPullInterval{500};
// The longest wait between two looks at the stop flag (Ctrl-C).
constexpr std::chrono::milliseconds kStopCheck{200};

std::chrono::milliseconds until(Clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
}

}  // namespace

// The client loop of docs/protocol.md (client::MailboxFollower): SYNC from the cursor, then pushes, with a
// SYNC again whenever a push does not continue what was shown or the gateway says SYNC_NEEDED.
int run_listen(const ListenRequest& r, std::ostream& out, std::ostream& err) {
  // No timeout: follow until stopped (a deadline far enough never to come).
  const auto deadline = r.timeout ? Clock::now() + *r.timeout : Clock::time_point::max();
  auto stopped = [&] { return r.stop != nullptr && r.stop->load(); };
  auto session = open_session(r.connection);
  if (!session.ok()) return fail(err, session.error());
  const std::string mode = session->auth_ok.delivery;
  client::MailboxFeed::Options options;
  options.cursor = r.after;
  options.sync_allowed = mode != "push";  // push mode refuses SYNC: there is nothing to catch up from
  client::MailboxFollower follower(*session->client, options);
  uint64_t cursor = r.after;  // the last seq printed: a later `listen --after` resumes after it
  uint64_t printed = 0;
  auto done = [&] { return r.count && printed >= *r.count; };
  auto finish = [&](int code) {
    out << "cursor=" << cursor << '\n';
    return code;
  };

  follower.start();
  auto last_pull = Clock::now();
  while (!done() && !stopped() && until(deadline).count() > 0) {
    if (mode == "pull" && !follower.feed().syncing()) {
      std::this_thread::sleep_for(std::min({kPullInterval, kStopCheck, until(deadline)}));
      if (Clock::now() - last_pull >= kPullInterval) {
        follower.resync();
        last_pull = Clock::now();
      }
      continue;
    }
    auto shown = follower.next(std::min(kStopCheck, until(deadline)));
    if (!shown.ok()) {
      if (shown.error().code() == Errc::kTimeout) continue;
      return finish(fail(err, "listen", shown.error()));
    }
    // Entries beyond `count` are left for a later resume from the printed cursor.
    for (const auto& e : *shown) {
      if (done()) break;
      out << entry_line(e) << '\n' << std::flush;
      cursor = e.seq;
      ++printed;
    }
  }
  if (r.count && !done() && !stopped()) {
    err << "qimctl: listen timed out after " << r.timeout->count() << " s with " << printed << " of "
        << *r.count << " messages\n";
    return finish(3);
  }
  return finish(0);
}

}  // namespace qim::ctl
