#include "bench/load/group_run.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>

#include "bench/load/connect.h"
#include "bench/load/server_metrics.h"
#include "client/mailbox_feed.h"

namespace qim::load {

namespace {

using Clock = std::chrono::steady_clock;
using Progress = std::function<void(const std::string&)>;

constexpr size_t kMaxNamesPerOp = 500;  // docs/protocol.md "Groups"
constexpr uint32_t kMaxMembers = 1'000'000;
constexpr uint32_t kMaxMessages = 10'000;
constexpr unsigned kVerifyThreads = 4;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The index of a load message: its client_msg_id is the decimal index (system entries are "~group:...").
bool index_of(std::string_view cmid, uint64_t& index) {
  auto [end, ec] = std::from_chars(cmid.data(), cmid.data() + cmid.size(), index);
  return ec == std::errc() && end == cmid.data() + cmid.size();
}

// The counters of every admin port summed; nullopt without admin ports or when one does not answer.
struct Counters {
  double inserts = 0, updates = 0, reads = 0, lwts = 0, group_reads = 0, group_loads = 0, node_lag = 0;
};
std::optional<Counters> read_counters(const std::vector<uint16_t>& admin_ports) {
  if (admin_ports.empty()) return std::nullopt;
  Counters c;
  for (uint16_t port : admin_ports) {
    auto text = metrics_text(port);
    if (!text) return std::nullopt;
    c.inserts += metric_sum(*text, "qim_store_ops_total{kind=\"insert\"}");
    c.updates += metric_sum(*text, "qim_store_ops_total{kind=\"update\"}");
    c.reads += metric_sum(*text, "qim_store_ops_total{kind=\"read\"}");
    c.lwts += metric_sum(*text, "qim_store_ops_total{kind=\"lwt\"}");
    c.group_reads += metric_sum(*text, "qim_group_store_ops_total{kind=\"read\"}");
    c.group_loads += metric_sum(*text, "qim_fanout_group_loads_total");
    c.node_lag += metric_sum(*text, "qim_node_lag{");
  }
  return c;
}

// What the listeners and the sender saw, per message; written on the client threads.
struct Tally {
  explicit Tally(uint32_t messages)
      : sent_ns(messages), ack_ns(messages), first_ns(messages), last_ns(messages), shown(messages) {}
  std::vector<std::atomic<int64_t>> sent_ns, ack_ns, first_ns, last_ns;  // 0: not yet
  std::vector<std::atomic<uint32_t>> shown;                              // listeners that showed it
  std::atomic<uint64_t> errors{0};
  std::atomic<bool> closing{false};  // set before the run closes its own connections
  std::mutex error_mu;
  std::string first_error;

  void error(const std::string& what) {
    errors.fetch_add(1);
    std::lock_guard lock(error_mu);
    if (first_error.empty()) first_error = what;
  }
  void on_shown(uint64_t i) {
    const int64_t t = now_ns();
    int64_t first = 0;
    first_ns[i].compare_exchange_strong(first, t);
    for (int64_t last = last_ns[i].load(); last < t && !last_ns[i].compare_exchange_weak(last, t);) {
    }
    shown[i].fetch_add(1);
  }
};

// A member following its mailbox with the client loop (docs/protocol.md "Delivery").
// The callback holds it; the connection (owned apart, so there is no cycle) outlives neither.
struct Listener {
  client::Client* client = nullptr;
  std::mutex mu;
  std::optional<client::MailboxFeed> feed;  // guarded by mu
};

void act(Listener& l, client::MailboxFeed::Actions a, const std::string& group, Tally& tally) {
  if (a.send) l.client->send_text(std::move(*a.send));
  if (a.error) tally.error(a.error->message());
  for (const auto& e : a.show) {
    uint64_t i = 0;
    if (e.conversation == group && index_of(e.client_msg_id, i) && i < tally.shown.size()) tally.on_shown(i);
  }
}

// One membership op; GROUP_OK comes once fanout applied it. An UNAVAILABLE answer means "appended, not
// applied yet" (docs/protocol.md): then GROUP_MEMBERS is polled until `expected` members are there.
Result<client::ServerFrame> apply_op(client::Client& owner, std::string_view type,
                                     const client::GroupRequestFields& fields, size_t expected) {
  auto r = owner.group(type, fields);
  if (r.ok() || r.error().message().rfind("UNAVAILABLE", 0) != 0 || fields.group.empty()) return r;
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    auto list = owner.group("GROUP_MEMBERS", {.group = fields.group});
    if (list.ok() && list->items.size() >= expected) return list;
  }
  return Error(Errc::kTimeout, std::string(type) + " of " + fields.group + " not applied within 120 s");
}

// The group of `names` (names[0] the owner, connected as `owner`): created with the first 500 others,
// then GROUP_ADD of 500 at a time. Returns the group id.
Result<std::string> build_group(client::Client& owner, const std::vector<std::string>& names,
                                uint32_t members, const Progress& progress) {
  auto batch = [&](size_t from) {
    const size_t to = std::min(names.size(), from + kMaxNamesPerOp);
    return std::vector<std::string>(names.begin() + static_cast<std::ptrdiff_t>(from),
                                    names.begin() + static_cast<std::ptrdiff_t>(to));
  };
  const auto start = Clock::now();
  auto next_report = start + std::chrono::seconds(1);
  client::GroupRequestFields create{.members = batch(1), .name = "load-" + std::to_string(members)};
  QIM_ASSIGN_OR_RETURN(auto created, apply_op(owner, "GROUP_CREATE", create, 0));
  const std::string group = created.group;
  if (group.empty()) return Error(Errc::kCorruptEntry, "GROUP_OK of GROUP_CREATE names no group");
  for (size_t from = 1 + kMaxNamesPerOp; from < names.size(); from += kMaxNamesPerOp) {
    client::GroupRequestFields add{.group = group, .members = batch(from)};
    auto added = apply_op(owner, "GROUP_ADD", add, std::min(names.size(), from + kMaxNamesPerOp));
    if (!added.ok()) return added.error();
    if (Clock::now() >= next_report) {
      next_report += std::chrono::seconds(1);
      char line[160];
      std::snprintf(line, sizeof line, "  t=%4.0fs  set-up: %zu of %u members", seconds_since(start),
                    std::min(names.size(), from + kMaxNamesPerOp), members);
      progress(line);
    }
  }
  return group;
}

// Waits (bounded) until no mailbox node has records left to finish: the set-up's system entries are
// written, so the messages' latencies are not those of the set-up's backlog. Three empty samples in a
// row, since fanout may append the last op's dispatch records just after its GROUP_OK.
void wait_for_nodes(const std::vector<uint16_t>& admin_ports, const Progress& progress) {
  const auto start = Clock::now();
  auto next_report = start + std::chrono::seconds(1);
  for (int idle = 0; idle < 3 && seconds_since(start) < 300;) {
    auto c = read_counters(admin_ports);
    if (!c) return;
    idle = c->node_lag <= 0 ? idle + 1 : 0;
    if (Clock::now() >= next_report) {
      next_report += std::chrono::seconds(1);
      progress("  t=" + std::to_string(static_cast<int>(seconds_since(start))) +
               "s  waiting for the mailbox nodes: " + std::to_string(static_cast<uint64_t>(c->node_lag)) +
               " records left");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// Reads the mailbox of each of `users` through a fresh connection (SYNC from 0 until the loop is caught
// up) and counts the messages of `group` it lacks. Connections or SYNCs that fail are errors, and that
// member is not counted as checked.
void verify_mailboxes(const GroupOptions& o, const std::vector<std::string>& users, const std::string& group,
                      const std::shared_ptr<client::Runtime>& runtime, GroupResult& result, Tally& tally) {
  std::atomic<size_t> next{0};
  std::atomic<uint32_t> checked{0};
  std::atomic<uint64_t> missing{0};
  SystemClock wall;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < users.size();) {
      auto c = connect_user(o.host, o.ports[i % o.ports.size()], o.secret, users[i], "verify", runtime, wall);
      if (!c.ok()) {
        tally.error(c.error().message());
        continue;
      }
      client::MailboxFollower follower(*c->client, {.ref_prefix = "verify"});
      follower.start();
      std::vector<bool> seen(o.messages, false);
      bool failed = false;
      while (follower.feed().syncing() && !failed) {
        auto entries = follower.next(std::chrono::seconds(10));
        if (!entries.ok()) {
          tally.error("SYNC of " + users[i] + ": " + entries.error().message());
          failed = true;
          break;
        }
        for (const auto& e : *entries) {
          uint64_t k = 0;
          if (e.conversation == group && index_of(e.client_msg_id, k) && k < seen.size()) seen[k] = true;
        }
      }
      c->client->close();
      if (failed) continue;
      checked.fetch_add(1);
      missing.fetch_add(static_cast<uint64_t>(std::count(seen.begin(), seen.end(), false)));
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < kVerifyThreads; ++t) threads.emplace_back(work);
  for (auto& t : threads) t.join();
  result.verified_members = checked.load();
  result.verify_missing = missing.load();
}

}  // namespace

Result<GroupResult> run_group(const GroupOptions& o, uint32_t members, const Progress& progress) {
  if (members < 2 || members > kMaxMembers)
    return Error(Errc::kInvalidArgument, "group members must be 2.." + std::to_string(kMaxMembers));
  if (o.messages == 0 || o.messages > kMaxMessages)
    return Error(Errc::kInvalidArgument, "group messages must be 1.." + std::to_string(kMaxMessages));
  if (o.ports.empty()) return Error(Errc::kInvalidArgument, "no gateway port");
  QIM_ASSIGN_OR_RETURN(ShardMap shards, ShardMap::create(o.shards));
  GroupResult result;
  result.config = o.config;
  result.members = members;
  result.messages = o.messages;
  result.rate = o.rate;

  // Fresh users: names[0] is the owner, who sends.
  SystemClock wall;
  const std::string tag = "grp_" + std::to_string(::getpid()) + "_" +
                          std::to_string(wall.now_ms() % 1'000'000) + "_" + std::to_string(members) + "_";
  std::vector<std::string> names;
  names.reserve(members);
  names.push_back(tag + "owner");
  for (uint32_t i = 1; i < members; ++i) names.push_back(tag + std::to_string(i));
  auto runtime = std::make_shared<client::Runtime>(o.io_threads);
  auto tally = std::make_shared<Tally>(o.messages);

  auto disconnected = [tally](const char* who) {
    return [tally, who](int, std::string_view) {
      if (!tally->closing.load()) tally->error(std::string(who) + " disconnected");
    };
  };
  // A membership op may wait QIM_GROUP_APPLY_WAIT_MS (5 s by default) for fanout: the owner waits longer.
  QIM_ASSIGN_OR_RETURN(auto owner, connect_user(o.host, o.ports[0], o.secret, names[0], "load", runtime, wall,
                                                disconnected("the sender"), std::chrono::seconds(30)));
  const bool sync_allowed = owner.auth_ok.delivery != "push";
  const auto setup_start = Clock::now();
  QIM_ASSIGN_OR_RETURN(const std::string group, build_group(*owner.client, names, members, progress));
  result.setup_seconds = seconds_since(setup_start);
  progress("  set-up: " + group + " with " + std::to_string(members) + " members in " +
           std::to_string(result.setup_seconds) + " s");
  wait_for_nodes(o.admin_ports, progress);

  // The listeners: connected after the set-up, so their first SYNC takes its system entries.
  const std::vector<std::string> others(names.begin() + 1, names.end());
  const auto chosen = choose_listeners(others, shards, o.chunk_entries, o.listeners);
  std::vector<std::shared_ptr<Listener>> listeners;
  std::vector<std::unique_ptr<client::Client>> listener_clients;
  const auto connect_start = Clock::now();
  auto connect_report = connect_start + std::chrono::seconds(1);
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (Clock::now() >= connect_report) {
      connect_report += std::chrono::seconds(1);
      progress("  t=" + std::to_string(static_cast<int>(seconds_since(connect_start))) + "s  " +
               std::to_string(i) + " of " + std::to_string(chosen.size()) + " listeners connected");
    }
    auto l = std::make_shared<Listener>();
    QIM_ASSIGN_OR_RETURN(auto c, connect_user(o.host, o.ports[i % o.ports.size()], o.secret, chosen[i],
                                              "load", runtime, wall, disconnected("a listener")));
    l->client = c.client.get();
    listener_clients.push_back(std::move(c.client));
    l->feed.emplace(client::MailboxFeed::Options{.sync_allowed = sync_allowed});
    l->client->set_on_frame([l, tally, group](std::string_view text) {
      auto f = client::parse_server_frame(text);
      if (!f.ok()) return;
      std::lock_guard lock(l->mu);
      if (l->feed->wants(*f)) act(*l, l->feed->on_frame(*f), group, *tally);
    });
    {
      std::lock_guard lock(l->mu);
      act(*l, l->feed->start(), group, *tally);
    }
    listeners.push_back(std::move(l));
  }
  result.listeners = static_cast<uint32_t>(listeners.size());
  // Every listener's first SYNC done (bounded), so none of it is in the messages' latencies.
  for (const auto deadline = Clock::now() + std::chrono::seconds(60); Clock::now() < deadline;) {
    size_t syncing = 0;
    for (auto& l : listeners) {
      std::lock_guard lock(l->mu);
      syncing += l->feed->syncing();
    }
    if (syncing == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  progress("  " + std::to_string(listeners.size()) + " listeners connected");

  owner.client->set_on_frame([tally](std::string_view text) {
    auto f = client::parse_server_frame(text);
    if (!f.ok()) return;
    uint64_t i = 0;
    if (f->type == "SEND_ACK" && index_of(f->client_msg_id, i) && i < tally->ack_ns.size()) {
      int64_t expected = 0;
      tally->ack_ns[i].compare_exchange_strong(expected, now_ns());
    } else if (f->type == "ERROR") {
      tally->error(f->code + ": " + f->message);
    }
  });
  const auto before = read_counters(o.admin_ports);
  const uint32_t want = result.listeners;
  auto done = [&](uint32_t i) { return tally->ack_ns[i].load() != 0 && tally->shown[i].load() >= want; };
  auto count_done = [&](uint32_t end) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < end; ++i) n += done(i);
    return n;
  };
  const std::string body(o.body_bytes, 'x');
  const auto start = Clock::now();
  auto next_report = start + std::chrono::seconds(1);
  auto report = [&](uint32_t sent) {
    if (Clock::now() < next_report) return;
    next_report += std::chrono::seconds(1);
    uint32_t acked = 0;
    for (uint32_t i = 0; i < sent; ++i) acked += tally->ack_ns[i].load() != 0;
    char line[200];
    std::snprintf(line, sizeof line, "  t=%4.0fs  sent=%u of %u  acked=%u  at every listener=%u  errors=%llu",
                  seconds_since(start), sent, o.messages, acked, count_done(sent),
                  static_cast<unsigned long long>(tally->errors.load()));
    progress(line);
  };
  auto send = [&](uint32_t i) {
    tally->sent_ns[i].store(now_ns());
    owner.client->send_text(client::send_to_conversation_frame(group, std::to_string(i), body));
  };
  auto wait_until = [&](uint32_t sent, const std::function<bool()>& ready) {
    for (const auto deadline = Clock::now() + std::chrono::duration<double>(o.drain_seconds);
         !ready() && Clock::now() < deadline;) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      report(sent);
    }
  };
  if (o.rate <= 0) {
    for (uint32_t i = 0; i < o.messages; ++i) {
      send(i);
      wait_until(i + 1, [&] { return done(i); });
    }
  } else {
    for (uint32_t sent = 0; sent < o.messages;) {
      const auto due =
          std::min<uint32_t>(o.messages, static_cast<uint32_t>(seconds_since(start) * o.rate) + 1);
      for (; sent < due; ++sent) send(sent);
      report(sent);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    wait_until(o.messages, [&] { return count_done(o.messages) == o.messages; });
  }
  const auto after = read_counters(o.admin_ports);

  std::vector<double> ack_ms, first_ms, last_ms;
  for (uint32_t i = 0; i < o.messages; ++i) {
    const int64_t s = tally->sent_ns[i].load();
    if (int64_t a = tally->ack_ns[i].load(); a != 0) ack_ms.push_back((a - s) / 1e6);
    if (int64_t f = tally->first_ns[i].load(); f != 0) first_ms.push_back((f - s) / 1e6);
    const uint32_t shown = std::min(tally->shown[i].load(), want);
    if (shown == want && want > 0) last_ms.push_back((tally->last_ns[i].load() - s) / 1e6);
    result.listener_missing += want - shown;
  }
  result.acked = static_cast<uint32_t>(ack_ms.size());
  result.ack = summarize(std::move(ack_ms));
  result.first = summarize(std::move(first_ms));
  result.last = summarize(std::move(last_ms));
  if (before && after) {
    const double entries = static_cast<double>(result.entries());
    result.inserts_per_entry = (after->inserts - before->inserts) / entries;
    result.updates_per_entry = (after->updates - before->updates) / entries;
    result.reads_per_entry = (after->reads - before->reads) / entries;
    result.lwts_per_entry = (after->lwts - before->lwts) / entries;
    result.group_reads_per_msg = (after->group_reads - before->group_reads) / o.messages;
    result.group_loads_per_msg = (after->group_loads - before->group_loads) / o.messages;
  }
  tally->closing.store(true);
  listener_clients.clear();  // closes the listeners' connections before the check opens its own
  listeners.clear();

  // Every mailbox that did not listen (the owner's included), or `verify` of them spread evenly.
  if (sync_allowed && o.verify > 0) {
    const std::unordered_set<std::string> heard(chosen.begin(), chosen.end());
    std::vector<std::string> unheard;
    for (const auto& n : names)
      if (!heard.contains(n)) unheard.push_back(n);
    std::vector<std::string> check;
    const size_t n = std::min<size_t>(unheard.size(), o.verify);
    for (size_t k = 0; k < n; ++k) check.push_back(unheard[k * unheard.size() / n]);
    progress("  checking " + std::to_string(check.size()) + " mailboxes through fresh connections");
    verify_mailboxes(o, check, group, runtime, result, *tally);
  }
  result.errors = tally->errors.load();
  std::lock_guard lock(tally->error_mu);
  result.first_error = tally->first_error;
  return result;
}

}  // namespace qim::load
