#include "bench/load/presence_run.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "bench/load/connect.h"
#include "bench/load/server_metrics.h"
#include "bench/load/stats.h"

namespace qim::load {

namespace {

using Clock = std::chrono::steady_clock;
using Progress = std::function<void(const std::string&)>;

constexpr uint32_t kMaxContacts = 10'000;
constexpr uint32_t kMaxChanges = 1'000;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The change under way and who has seen it; written by the contacts' frame callbacks (the client
// runtime's threads), read by the run.
struct Watch {
  explicit Watch(uint32_t contacts) : seen_gen(contacts) {}
  std::string subject;
  std::atomic<uint32_t> gen{0};                 // the change's number; 0: none under way
  std::atomic<int> status{0};                   // 1: online expected, 2: offline expected
  std::vector<std::atomic<uint32_t>> seen_gen;  // per contact: the last change it saw
  std::atomic<uint32_t> seen{0};
  std::atomic<int64_t> first_ns{0}, last_ns{0};

  void start(uint32_t g, int s) {
    seen.store(0);
    first_ns.store(0);
    last_ns.store(0);
    status.store(s);
    gen.store(g);
  }

  // A PRESENCE frame about the subject with the expected status, the first of this change for contact i.
  void on_frame(uint32_t i, std::string_view text) {
    const uint32_t g = gen.load();
    if (g == 0 || text.find("\"type\":\"PRESENCE\"") == std::string_view::npos) return;
    if (text.find("\"user\":\"" + subject + "\"") == std::string_view::npos) return;
    const char* want = status.load() == 1 ? "\"status\":\"online\"" : "\"status\":\"offline\"";
    if (text.find(want) == std::string_view::npos) return;
    if (seen_gen[i].exchange(g) == g) return;
    const int64_t t = now_ns();
    int64_t expected = 0;
    first_ns.compare_exchange_strong(expected, t);
    int64_t last = last_ns.load();
    while (last < t && !last_ns.compare_exchange_weak(last, t)) {
    }
    seen.fetch_add(1);
  }
};

// Waits until every contact saw the change or the drain ends; (first, last) in ms from `t0`, or nullopt.
std::optional<std::pair<double, double>> wait_change(Watch& w, uint32_t contacts, int64_t t0, double drain) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(drain);
  while (w.seen.load() < contacts && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  w.gen.store(0);
  if (w.seen.load() < contacts) return std::nullopt;
  return std::pair{static_cast<double>(w.first_ns.load() - t0) / 1e6,
                   static_cast<double>(w.last_ns.load() - t0) / 1e6};
}

// {store reads, presence frames pushed} summed over `ports`; nullopt without ports or an answer.
std::optional<std::pair<double, double>> counters(const std::vector<uint16_t>& ports) {
  if (ports.empty()) return std::nullopt;
  std::pair<double, double> sum{0, 0};
  for (uint16_t port : ports) {
    auto text = metrics_text(port);
    if (!text) return std::nullopt;
    sum.first += metric_sum(*text, "qim_store_ops_total{kind=\"read\"}");
    sum.second += metric_sum(*text, "qim_presence_frames_pushed_total");
  }
  return sum;
}

}  // namespace

Result<PresenceResult> run_presence(const PresenceOptions& o, uint32_t contacts, const Progress& progress) {
  if (contacts == 0 || contacts > kMaxContacts)
    return Error(Errc::kInvalidArgument, "presence contacts must be 1.." + std::to_string(kMaxContacts));
  if (o.changes == 0 || o.changes > kMaxChanges)
    return Error(Errc::kInvalidArgument, "presence changes must be 1.." + std::to_string(kMaxChanges));
  if (o.ports.empty()) return Error(Errc::kInvalidArgument, "no gateway port");
  PresenceResult result;
  result.config = o.config;
  result.contacts = contacts;

  SystemClock wall;
  const std::string tag = "prs_" + std::to_string(::getpid()) + "_" +
                          std::to_string(wall.now_ms() % 1'000'000) + "_" + std::to_string(contacts) + "_";
  auto runtime = std::make_shared<client::Runtime>(o.io_threads);
  auto watch = std::make_shared<Watch>(contacts);
  watch->subject = tag + "subject";

  // The contacts: each connects, sends the subject one message and waits for its own copy (pushed to
  // it), so the direct conversation exists and its connection has met the peer.
  std::vector<std::unique_ptr<client::Client>> clients;
  clients.reserve(contacts);
  const auto setup_start = Clock::now();
  auto report = setup_start + std::chrono::seconds(1);
  for (uint32_t i = 0; i < contacts; ++i) {
    if (Clock::now() >= report) {
      report += std::chrono::seconds(1);
      progress("  t=" + std::to_string(static_cast<int>(seconds_since(setup_start))) + "s  " +
               std::to_string(i) + " of " + std::to_string(contacts) + " contacts connected");
    }
    const std::string name = tag + std::to_string(i);
    QIM_ASSIGN_OR_RETURN(auto c, connect_user(o.host, o.ports[i % o.ports.size()], o.secret, name, "load",
                                              runtime, wall, {}, std::chrono::seconds(30)));
    const std::string cmid = "p" + std::to_string(i);
    // UNAVAILABLE (not durable within the SEND deadline, on a loaded machine) is retried with the same
    // client_msg_id, as the SDK does: a duplicate is answered with the first's id.
    auto ack = c.client->send(watch->subject, cmid, "hello");
    for (int attempt = 1; !ack.ok() && ack.error().message().rfind("UNAVAILABLE", 0) == 0 && attempt < 10;
         ++attempt)
      ack = c.client->send(watch->subject, cmid, "hello");
    if (!ack.ok()) return ack.error();
    const std::string own = "\"client_msg_id\":\"" + cmid + "\"";
    QIM_ASSIGN_OR_RETURN(auto copy, c.client->wait_for(
                                        [&](const client::ServerFrame& f) {
                                          return f.type == "DELIVER" && f.raw.find(own) != std::string::npos;
                                        },
                                        std::chrono::seconds(30)));
    (void)copy;
    c.client->set_on_frame([watch, i](std::string_view text) { watch->on_frame(i, text); });
    clients.push_back(std::move(c.client));
  }
  result.setup_seconds = seconds_since(setup_start);
  progress("  set-up: " + std::to_string(contacts) + " contacts of " + watch->subject + " in " +
           std::to_string(result.setup_seconds) + " s");

  const auto before = counters(o.admin_ports);
  uint32_t gen = 0;
  for (uint32_t k = 0; k < o.changes; ++k) {
    // Online: from the subject's connect to the contacts' PRESENCE online.
    watch->start(++gen, 1);
    const int64_t t_on = now_ns();
    QIM_ASSIGN_OR_RETURN(auto subject, connect_user(o.host, o.ports[0], o.secret, watch->subject, "load",
                                                    runtime, wall, {}, std::chrono::seconds(30)));
    auto on = wait_change(*watch, contacts, t_on, o.drain_seconds);
    // Offline: from the subject's close (its only connection) to the contacts' PRESENCE offline, which
    // the deployment sends only after its grace.
    watch->start(++gen, 2);
    const int64_t t_off = now_ns();
    subject.client->close();
    auto off = wait_change(*watch, contacts, t_off, o.drain_seconds + o.grace_seconds);
    subject.client.reset();
    if (on) {
      result.online_first_ms.push_back(on->first);
      result.online_last_ms.push_back(on->second);
    }
    if (off) {
      result.offline_first_ms.push_back(off->first);
      result.offline_last_ms.push_back(off->second);
    }
    result.missing += !on + !off;
    result.changes++;
    char line[200];
    std::snprintf(line, sizeof line,
                  "  change %u: online to the last of %u contacts in %s ms, offline in %s ms", k + 1,
                  contacts, on ? std::to_string(on->second).c_str() : "(missing)",
                  off ? std::to_string(off->second).c_str() : "(missing)");
    progress(line);
  }
  if (const auto after = counters(o.admin_ports); before && after && result.changes > 0) {
    result.store_reads_per_change = (after->first - before->first) / (2.0 * result.changes);
    result.frames_pushed_per_change = (after->second - before->second) / (2.0 * result.changes);
  }
  for (auto& c : clients) c->close();
  return result;
}

namespace {

struct Row {
  const char* direction;
  std::vector<double> first, last;
};

std::vector<Row> rows_of(const PresenceResult& r) {
  return {{"online", r.online_first_ms, r.online_last_ms},
          {"offline", r.offline_first_ms, r.offline_last_ms}};
}

std::string ms(double v) {
  char b[32];
  std::snprintf(b, sizeof b, v < 10 ? "%.2f" : "%.1f", v);
  return b;
}

std::string opt(double v) {
  return v < 0 ? "-" : ms(v);
}

}  // namespace

std::string presence_markdown(const std::vector<PresenceResult>& results) {
  std::string out =
      "| config | contacts | change | changes seen | first contact P50 | P99 | last contact P50 | P99 | max "
      "| "
      "missing | store reads / change | PRESENCE frames / change | set-up s |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : results) {
    for (Row row : rows_of(r)) {
      const double max = row.last.empty() ? 0 : *std::max_element(row.last.begin(), row.last.end());
      const size_t seen = row.last.size();
      out += "| " + r.config + " | " + std::to_string(r.contacts) + " | " + row.direction + " | " +
             std::to_string(seen) + " of " + std::to_string(r.changes) + " | " +
             ms(percentile(row.first, 50)) + " ms | " + ms(percentile(row.first, 99)) + " ms | " +
             ms(percentile(row.last, 50)) + " ms | " + ms(percentile(row.last, 99)) + " ms | " + ms(max) +
             " ms | " + std::to_string(r.changes - seen) + " | " + opt(r.store_reads_per_change) + " | " +
             opt(r.frames_pushed_per_change) + " | " + ms(r.setup_seconds) + " |\n";
    }
  }
  return out;
}

std::string presence_csv(const std::vector<PresenceResult>& results) {
  std::string out =
      "config,contacts,change,seen,changes,first_p50_ms,first_p99_ms,last_p50_ms,last_p99_ms,last_max_ms,"
      "store_reads_per_change,frames_per_change,setup_s\n";
  for (const auto& r : results) {
    for (Row row : rows_of(r)) {
      const double max = row.last.empty() ? 0 : *std::max_element(row.last.begin(), row.last.end());
      out += r.config + "," + std::to_string(r.contacts) + "," + row.direction + "," +
             std::to_string(row.last.size()) + "," + std::to_string(r.changes) + "," +
             ms(percentile(row.first, 50)) + "," + ms(percentile(row.first, 99)) + "," +
             ms(percentile(row.last, 50)) + "," + ms(percentile(row.last, 99)) + "," + ms(max) + "," +
             opt(r.store_reads_per_change) + "," + opt(r.frames_pushed_per_change) + "," +
             ms(r.setup_seconds) + "\n";
    }
  }
  return out;
}

}  // namespace qim::load
