#include "e2e/nemesis_load.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "client/mailbox_feed.h"
#include "e2e/history_support.h"
#include "e2e/scenario_helpers.h"

namespace qim::e2e {

std::unique_ptr<Client> connect_quietly(uint16_t port, const std::string& user,
                                        std::chrono::milliseconds timeout, const std::string& device) {
  client::ClientOptions o;
  o.port = port;
  o.timeout = timeout;
  auto c = Client::connect(o);
  if (!c.ok()) return nullptr;
  if (!(*c)->auth(token_for(user, device)).ok()) return nullptr;
  return std::move(c).value();
}

NemesisSender::NemesisSender(checker::HistoryRecorder& h, std::vector<uint16_t> ports, size_t first,
                             std::string name, std::vector<std::string> recipients)
    : h_(h),
      ports_(std::move(ports)),
      next_port_(first),
      name_(std::move(name)),
      recipients_(std::move(recipients)) {
  thread_ = std::thread([this] { run(); });
}

void NemesisSender::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void NemesisSender::reconnect() {
  // A client's SEND timeout (5 s): a paused gateway leaves the SEND unknown, and the client moves on.
  client_ = connect_quietly(ports_[next_port_ % ports_.size()], name_, 5s);
  if (!client_) {
    ++next_port_;
    std::this_thread::sleep_for(200ms);
  }
}

void NemesisSender::run() {
  const std::string label = name_ + "/d1";
  for (uint64_t i = 0; !stop_;) {
    if (!client_) {
      reconnect();
      if (!client_) continue;
      if (i > 0) ++reconnects_;
    }
    SendOutcome o;
    o.recipient = recipients_[i % recipients_.size()];
    o.cmid = name_ + "-" + std::to_string(i++);
    o.started = NemesisClock::now();
    h_.invoke(label, name_, conv(name_, o.recipient), o.cmid, kBody);
    auto ack = client_->send(o.recipient, o.cmid, kBody);
    o.answered = NemesisClock::now();
    record_answer(h_, label, name_, o.cmid, ack);
    o.acked = ack.ok();
    if (ack.ok()) o.message_id = ack->message_id;
    if (!ack.ok()) {
      o.error = ack.error().message();
      // No answer (a timeout, a closed connection): the connection is given up, the next one goes to the
      // next gateway. A refusal (an ERROR) keeps the connection.
      if (wire_code_of(o.error).empty()) {
        client_.reset();
        ++next_port_;
      }
    }
    {
      std::lock_guard lock(mu_);
      outcomes_.push_back(std::move(o));
    }
    // The load's pace (about 40 SENDs a second per sender), not a synchronisation.
    std::this_thread::sleep_for(25ms);
  }
}

std::vector<SendOutcome> NemesisSender::outcomes() const {
  std::lock_guard lock(mu_);
  return outcomes_;
}

size_t NemesisSender::acked_since(NemesisClock::time_point since) const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& o : outcomes_) n += o.acked && o.started >= since;
  return n;
}

std::optional<NemesisClock::time_point> NemesisSender::first_ack_after(NemesisClock::time_point since) const {
  std::lock_guard lock(mu_);
  for (const auto& o : outcomes_)
    if (o.acked && o.started >= since) return o.answered;
  return std::nullopt;
}

NemesisClock::duration NemesisSender::longest_ack_gap() const {
  std::lock_guard lock(mu_);
  NemesisClock::duration gap{};
  std::optional<NemesisClock::time_point> last;
  for (const auto& o : outcomes_) {
    if (!o.acked) continue;
    if (last) gap = std::max(gap, o.answered - *last);
    last = o.answered;
  }
  return gap;
}

Result<size_t> NemesisSender::retry_unacknowledged(std::chrono::seconds within) {
  const auto deadline = NemesisClock::now() + within;
  const std::string label = name_ + "/retry";
  std::unique_ptr<Client> c;
  size_t retried = 0;
  std::lock_guard lock(mu_);
  for (auto& o : outcomes_) {
    if (o.acked) continue;
    ++retried;
    for (;;) {
      while (!c && NemesisClock::now() < deadline) {
        c = connect_quietly(ports_[next_port_++ % ports_.size()], name_, 5s);
        if (!c) std::this_thread::sleep_for(200ms);
      }
      if (!c) return Error(Errc::kTimeout, o.cmid + ": no gateway took a connection to retry it");
      h_.invoke(label, name_, conv(name_, o.recipient), o.cmid, kBody);
      auto ack = c->send(o.recipient, o.cmid, kBody);
      record_answer(h_, label, name_, o.cmid, ack);
      if (ack.ok()) {
        o.acked = true;
        o.message_id = ack->message_id;
        break;
      }
      if (NemesisClock::now() >= deadline)
        return Error(Errc::kTimeout, o.cmid + ": " + ack.error().message());
      if (wire_code_of(ack.error().message()).empty()) c.reset();
      std::this_thread::sleep_for(200ms);  // a client's back-off before it sends the same SEND again
    }
  }
  return retried;
}

NemesisWatcher::NemesisWatcher(checker::HistoryRecorder& h, std::vector<uint16_t> ports, std::string user)
    : h_(h), ports_(std::move(ports)), user_(std::move(user)) {
  thread_ = std::thread([this] { run(); });
}

void NemesisWatcher::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (!recorded_) h_.shown(user_ + "/watch", user_, shown_);
  recorded_ = true;
}

void NemesisWatcher::run() {
  const std::string label = user_ + "/watch";
  client::MailboxFeed::Options o;  // the cursor and the remembered ids go from one connection to the next
  for (size_t port = 0; !stop_; ++port) {
    auto c = connect_quietly(ports_[port % ports_.size()], user_, 5s, "watch");
    if (!c) {
      std::this_thread::sleep_for(200ms);
      continue;
    }
    client::MailboxFeed feed(o);
    bool broken = false;
    auto act = [&](client::MailboxFeed::Actions a) {
      shown_.insert(shown_.end(), a.show.begin(), a.show.end());
      if (a.error) broken = true;  // our SYNC refused (UNAVAILABLE in a fault): a new connection retries
      if (a.send && !broken) c->send_text(*a.send);
    };
    act(feed.start());
    auto last_frame = NemesisClock::now();
    while (!stop_ && !broken) {
      const std::string ref = feed.outstanding_ref();
      auto f = c->wait_for(
          [&ref](const ServerFrame& x) {
            return x.type == "DELIVER" || x.type == "SYNC_NEEDED" || (!ref.empty() && x.ref == ref) ||
                   (x.type == "ERROR" && x.ref.empty());
          },
          200ms);
      if (!f.ok()) {
        // A timeout is quiet; a SYNC without an answer for 5 s, or a closed connection, is not.
        broken =
            f.error().code() != Errc::kTimeout || (feed.syncing() && NemesisClock::now() - last_frame > 5s);
        continue;
      }
      last_frame = NemesisClock::now();
      if (f->type == "ERROR" && f->ref.empty()) break;
      if (f->type == "DELIVER" || f->type == "SYNC_PAGE") {
        h_.frame(label, user_, *f);
        ++frames_;
      }
      act(feed.on_frame(*f));
    }
    o.cursor = feed.cursor();
    o.recent_message_ids = feed.recent_message_ids();
  }
}

bool wait_for_acks(const std::vector<std::unique_ptr<NemesisSender>>& senders, NemesisClock::time_point since,
                   size_t n, std::chrono::seconds within) {
  const auto deadline = NemesisClock::now() + within;
  for (;;) {
    bool all = true;
    for (const auto& s : senders) all = all && s->acked_since(since) >= n;
    if (all) return true;
    if (NemesisClock::now() >= deadline) return false;
    std::this_thread::sleep_for(100ms);
  }
}

size_t stop_and_retry(std::vector<std::unique_ptr<NemesisSender>>& senders) {
  for (auto& s : senders) s->stop();
  size_t retried = 0;
  for (auto& s : senders) {
    auto r = s->retry_unacknowledged(std::chrono::seconds(60));
    EXPECT_TRUE(r.ok()) << s->name() << ": " << r.error().to_string();
    if (r.ok()) retried += *r;
  }
  return retried;
}

checker::CheckReport judge(checker::HistoryRecorder& h, const Deployment& qim,
                           const std::vector<std::unique_ptr<NemesisSender>>& senders) {
  // user -> the keys (client_msg_id, unique to their sender) of the SENDs acknowledged to or by them: by key,
  // not id, as the client matches its messages; a retry acknowledged under a repeat's id is stored under
  // the first record's (docs/protocol.md, "A SEND stored twice still shows once").
  std::map<std::string, std::set<std::string>> wanted;
  for (const auto& s : senders) {
    wanted[s->name()];
    for (const auto& o : s->outcomes()) {
      if (!o.acked) continue;
      wanted[s->name()].insert(o.cmid);
      wanted[o.recipient].insert(o.cmid);
    }
  }
  for (const auto& [u, keys] : wanted) {
    auto c = login_at(qim.port_for(u), u);
    if (!c) continue;  // login_at failed the test
    // The mailbox catches up with the Outbox (a node taking over, fanout resuming): poll until it holds
    // every acknowledged message, then read it whole as the final read.
    sync_until(*c, [&](const std::vector<Entry>& e) {
      std::set<std::string> found;
      for (const auto& x : e)
        if (keys.count(x.client_msg_id)) found.insert(x.client_msg_id);
      return found.size() >= keys.size();
    });
    record_final_mailbox(h, *c, u);
  }
  expect_history_ok(h);
  return checker::check_history(h.events());
}

void print_figures(const std::string& scenario, const checker::CheckReport& report, size_t retried,
                   double recover_s, double took_s) {
  const auto& s = report.stats;
  std::cout << "[ nemesis  ] " << scenario << ": " << s.sends << " SENDs (" << s.attempts
            << " attempts with the retries), " << s.acknowledged << " acknowledged, " << s.unknown
            << " unknown (" << s.unknown_stored << " of them stored), " << s.acked_as_first_record
            << " acknowledged under a repeat's id (stored under the first), " << s.refused
            << " refused for good, " << retried << " retried with the same key, " << s.duplicates_hidden
            << " duplicates hidden, " << s.final_entries << " entries in " << s.mailboxes
            << " final mailboxes, " << s.frames << " frames received and " << s.shown_entries
            << " entries shown by client loops, recovered in " << recover_s << " s, scenario took " << took_s
            << " s, " << report.violations.size() << " violations\n";
}

}  // namespace qim::e2e
