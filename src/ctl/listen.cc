#include <ostream>
#include <thread>

#include "ctl/commands.h"
#include "ctl/format.h"

namespace qim::ctl {

namespace {

using Clock = std::chrono::steady_clock;
// How often pull mode asks again; pushes make this unnecessary in the other modes.
constexpr std::chrono::milliseconds kPullInterval{500};

// The client's loop of docs/protocol.md: keep the highest seq seen, print only what is above it.
class Listener {
 public:
  Listener(const ListenRequest& r, client::Client& c, std::ostream& out)
      : r_(r), client_(c), out_(out), cursor_(r.after) {}

  uint64_t cursor() const { return cursor_; }
  uint64_t printed() const { return printed_; }
  bool done() const { return r_.count && printed_ >= *r_.count; }

  // Prints the entries above the cursor until `count` is reached; the rest are left for a later resume.
  void take(const std::vector<client::Entry>& entries) {
    for (const auto& e : entries) {
      if (done()) return;
      if (e.seq <= cursor_) continue;  // a push and a SYNC page may overlap
      out_ << entry_line(e) << '\n' << std::flush;
      cursor_ = e.seq;
      ++printed_;
    }
  }

  // SYNC from the cursor until `more` is false (or `count` is reached).
  Status catch_up() {
    while (!done()) {
      QIM_ASSIGN_OR_RETURN(auto page, client_.sync(cursor_));
      take(page.entries);
      if (!page.more || page.entries.empty()) return ok_status();
    }
    return ok_status();
  }

  // The next pushed DELIVER (or unsolicited ERROR, e.g. an expired token) within `wait`; Timeout if none.
  Status next_push(std::chrono::milliseconds wait) {
    auto frame = client_.wait_for(
        [](const client::ServerFrame& f) {
          return f.type == "DELIVER" || (f.type == "ERROR" && f.ref.empty());
        },
        wait);
    if (!frame.ok()) return frame.error();
    if (frame->type == "ERROR") return Error(Errc::kTransport, frame->code + ": " + frame->message);
    take(frame->entries);
    return ok_status();
  }

 private:
  const ListenRequest& r_;
  client::Client& client_;
  std::ostream& out_;
  uint64_t cursor_;
  uint64_t printed_ = 0;
};

std::chrono::milliseconds until(Clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
}

}  // namespace

int run_listen(const ListenRequest& r, std::ostream& out, std::ostream& err) {
  const auto deadline = Clock::now() + r.timeout;
  auto session = open_session(r.connection);
  if (!session.ok()) return fail(err, session.error());
  const std::string mode = session->auth_ok.delivery;
  Listener listener(r, *session->client, out);
  // The cursor is printed on every way out, so a later `listen --after` resumes after what was shown.
  auto finish = [&](int code) {
    out << "cursor=" << listener.cursor() << '\n';
    return code;
  };

  if (mode != "push") {  // push mode refuses SYNC: there is nothing to catch up from
    if (auto s = listener.catch_up(); !s.ok()) return finish(fail(err, "sync", s.error()));
  }
  while (!listener.done() && until(deadline).count() > 0) {
    if (mode == "pull") {
      std::this_thread::sleep_for(std::min(kPullInterval, until(deadline)));
      if (auto s = listener.catch_up(); !s.ok()) return finish(fail(err, "sync", s.error()));
      continue;
    }
    auto s = listener.next_push(until(deadline));
    if (!s.ok() && s.error().code() != Errc::kTimeout) return finish(fail(err, "listen", s.error()));
  }
  if (r.count && !listener.done()) {
    err << "qimctl: listen timed out after " << r.timeout.count() << " s with " << listener.printed()
        << " of " << *r.count << " messages\n";
    return finish(3);
  }
  return finish(0);
}

}  // namespace qim::ctl
