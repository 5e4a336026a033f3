#include "bench/load/load_run.h"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "bench/load/connect.h"
#include "bench/load/server_metrics.h"
#include "client/mailbox_feed.h"

namespace qim::load {

namespace {

using Clock = std::chrono::steady_clock;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// The client_msg_id of message `index` is its decimal index.
bool index_of(std::string_view cmid, uint64_t& index) {
  auto [end, ec] = std::from_chars(cmid.data(), cmid.data() + cmid.size(), index);
  return ec == std::errc() && end == cmid.data() + cmid.size();
}

// Seconds of CPU (user + system) the process has used, from /proc; nullopt if unreadable.
std::optional<double> cpu_seconds(int64_t pid) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 2));
  std::string f;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::stod(f);
    if (i == 15) stime = std::stod(f);
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

struct ServerCounters {
  double inserts = 0, updates = 0, reads = 0, lwts = 0, pages = 0, paged = 0;
  double history_inserts = 0;  // the archiver's history rows (2 per message), counted apart from the store
  double sync_reads = 0;       // the reads of gateway-only processes (SYNC)
};

// Sums the store and page counters of every admin port's /metrics; nullopt without admin ports or when one
// does not answer (a partial sum would understate the operations per message).
std::optional<ServerCounters> server_counters(const LoadOptions& o);

// One sample of the engine's counters: the command's output, parsed. Io if it cannot run or exits non-zero.
Result<std::vector<std::pair<std::string, double>>> engine_sample(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return Error(Errc::kIo, "engine counters: cannot run '" + command + "'");
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) text.append(buf, n);
  const int status = ::pclose(pipe);
  if (status != 0)
    return Error(Errc::kIo,
                 "engine counters: '" + command + "' exited with status " + std::to_string(status));
  return parse_counters(text);
}

// CPU seconds of each process, in the order of `processes` (nullopt where /proc is unreadable).
std::vector<std::optional<double>> cpu_of(const std::vector<ServerProcess>& processes) {
  std::vector<std::optional<double>> out;
  for (const auto& p : processes) out.push_back(cpu_seconds(p.pid));
  return out;
}

}  // namespace

struct LoadRun::Shared {
  explicit Shared(uint64_t capacity)
      : sent_ns(capacity), ack_ns(capacity), deliver_ns(capacity), capacity(capacity) {}
  std::vector<std::atomic<int64_t>> sent_ns, ack_ns, deliver_ns;  // 0: not yet
  const uint64_t capacity;
  std::atomic<uint64_t> acked{0}, delivered{0}, errors{0}, disconnects{0}, syncs{0};
  std::mutex error_mu;
  std::string first_error;

  void on_sender_frame(std::string_view text) {
    auto f = client::parse_server_frame(text);
    if (!f.ok()) return;
    uint64_t i = 0;
    if (f->type == "SEND_ACK" && index_of(f->client_msg_id, i) && i < capacity) {
      int64_t expected = 0;
      if (ack_ns[i].compare_exchange_strong(expected, now_ns())) acked.fetch_add(1);
    } else if (f->type == "ERROR") {
      errors.fetch_add(1);
      std::lock_guard lock(error_mu);
      if (first_error.empty()) first_error = f->code + ": " + f->message;
    }
  }

  // A receiver runs the client loop of docs/protocol.md (client::MailboxFeed): a message counts as
  // delivered when the loop shows it, by push or by the SYNC a gap triggers.
  struct Receiver {
    client::Client* client = nullptr;
    std::mutex mu;
    std::optional<client::MailboxFeed> feed;  // guarded by mu
  };

  void act(Receiver& r, client::MailboxFeed::Actions a) {
    if (a.send) {
      syncs.fetch_add(1, std::memory_order_relaxed);  // the loop only ever sends SYNC frames
      r.client->send_text(std::move(*a.send));
    }
    if (a.error) {
      errors.fetch_add(1);
      std::lock_guard lock(error_mu);
      if (first_error.empty()) first_error = a.error->message();
    }
    for (const auto& e : a.show) {
      uint64_t i = 0;
      if (!index_of(e.client_msg_id, i) || i >= capacity) continue;
      int64_t expected = 0;
      if (deliver_ns[i].compare_exchange_strong(expected, now_ns())) delivered.fetch_add(1);
    }
  }

  void on_receiver_frame(Receiver& r, std::string_view text) {
    auto f = client::parse_server_frame(text);
    if (!f.ok()) return;
    std::lock_guard lock(r.mu);
    if (!r.feed->wants(*f)) return;
    act(r, r.feed->on_frame(*f));
  }
};

namespace {

// Adds the store and page counters of one /metrics text to `c`.
void add_counters(const std::string& body, ServerCounters& c) {
  c.inserts += metric_sum(body, "qim_store_ops_total{kind=\"insert\"}");
  c.updates += metric_sum(body, "qim_store_ops_total{kind=\"update\"}");
  c.reads += metric_sum(body, "qim_store_ops_total{kind=\"read\"}");
  c.lwts += metric_sum(body, "qim_store_ops_total{kind=\"lwt\"}");
  c.history_inserts += metric_sum(body, "qim_history_ops_total{kind=\"insert\"}");
  c.pages += metric_sum(body, "qim_node_pages_total{");
  c.paged += metric_sum(body, "qim_node_paged_records_total{");
}

std::optional<ServerCounters> server_counters(const LoadOptions& o) {
  if (o.admin_ports.empty()) return std::nullopt;
  ServerCounters c;
  for (uint16_t port : o.admin_ports) {
    auto body = metrics_text(port);
    if (!body) return std::nullopt;
    ServerCounters one;
    add_counters(*body, one);
    c.inserts += one.inserts, c.updates += one.updates, c.reads += one.reads, c.lwts += one.lwts;
    c.pages += one.pages, c.paged += one.paged, c.history_inserts += one.history_inserts;
    for (uint16_t g : o.gateway_admin_ports)
      if (g == port) c.sync_reads += one.reads;
  }
  return c;
}

}  // namespace

Result<std::unique_ptr<LoadRun>> LoadRun::connect(const LoadOptions& options, uint64_t max_messages) {
  std::unique_ptr<LoadRun> run(new LoadRun(options));
  run->runtime_ = std::make_shared<client::Runtime>(options.io_threads);
  run->shared_ = std::make_shared<Shared>(max_messages);
  SystemClock wall;
  const std::string tag = std::to_string(::getpid()) + "_" + std::to_string(wall.now_ms() % 1'000'000);
  auto open = [&](const std::string& user, bool sender,
                  uint16_t port) -> Result<std::unique_ptr<client::Client>> {
    // Authenticate on the queue first, then switch the frames to the counting callback.
    auto shared = run->shared_;
    QIM_ASSIGN_OR_RETURN(auto connected,
                         connect_user(options.host, port, options.secret, user, "load", run->runtime_, wall,
                                      [shared](int, std::string_view) { shared->disconnects.fetch_add(1); }));
    auto c = std::move(connected.client);
    if (sender) {
      c->set_on_frame([shared](std::string_view f) { shared->on_sender_frame(f); });
    } else {
      auto receiver = std::make_shared<Shared::Receiver>();
      receiver->client = c.get();
      client::MailboxFeed::Options fo;
      fo.sync_allowed = connected.auth_ok.delivery != "push";
      receiver->feed.emplace(fo);
      c->set_on_frame([shared, receiver](std::string_view f) { shared->on_receiver_frame(*receiver, f); });
      // The first SYNC also returns what was pushed before the callback was in place.
      std::lock_guard lock(receiver->mu);
      shared->act(*receiver, receiver->feed->start());
    }
    return c;
  };
  for (uint32_t i = 0; i < options.pairs; ++i) {
    std::string s = "load_" + tag + "_s" + std::to_string(i);
    std::string r = "load_" + tag + "_r" + std::to_string(i);
    const auto& ports = options.ports;
    QIM_ASSIGN_OR_RETURN(auto receiver, open(r, false, ports[i % ports.size()]));
    QIM_ASSIGN_OR_RETURN(auto sender, open(s, true, ports[(i + 1) % ports.size()]));
    run->receivers_.push_back(std::move(receiver));
    run->senders_.push_back(std::move(sender));
    run->receiver_ids_.push_back(r);
  }
  return run;
}

LoadRun::~LoadRun() {
  senders_.clear();
  receivers_.clear();
}

StepResult LoadRun::run_step(double rate, double seconds, double drain_seconds,
                             const std::function<void(const std::string&)>& progress) {
  Shared& sh = *shared_;
  const uint64_t first = next_index_;
  const uint64_t planned = std::min<uint64_t>(static_cast<uint64_t>(rate * seconds), sh.capacity - first);
  const std::string body(options_.body_bytes, 'x');
  std::optional<Result<std::vector<std::pair<std::string, double>>>> engine_before;
  if (!options_.engine_counters_command.empty())
    engine_before = engine_sample(options_.engine_counters_command);
  const auto before = server_counters(options_);
  const auto cpu_before = cpu_of(options_.processes);
  const uint64_t errors0 = sh.errors.load(), disconnects0 = sh.disconnects.load(), syncs0 = sh.syncs.load();
  auto count_since = [&](std::vector<std::atomic<int64_t>>& v, uint64_t end) {
    uint64_t n = 0;
    for (uint64_t i = first; i < end; ++i) n += v[i].load(std::memory_order_relaxed) != 0;
    return n;
  };

  const auto start = Clock::now();
  auto next_report = start + std::chrono::seconds(1);
  uint64_t sent = 0;
  while (sent < planned) {
    // Every message due by now goes out; then sleep a millisecond. The offered rate holds even when a
    // send is late, because what is due is computed from the start.
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const uint64_t due = std::min<uint64_t>(planned, static_cast<uint64_t>(elapsed * rate) + 1);
    for (; sent < due; ++sent) {
      const uint64_t index = first + sent;
      const size_t pair = index % senders_.size();
      sh.sent_ns[index].store(now_ns());
      senders_[pair]->send_text(client::send_frame(receiver_ids_[pair], std::to_string(index), body));
    }
    if (Clock::now() >= next_report) {
      next_report += std::chrono::seconds(1);
      char line[200];
      std::snprintf(line, sizeof line, "  t=%4.0fs  sent=%-8llu acked=%-8llu delivered=%-8llu errors=%llu",
                    std::chrono::duration<double>(Clock::now() - start).count(),
                    static_cast<unsigned long long>(sent),
                    static_cast<unsigned long long>(count_since(sh.ack_ns, first + sent)),
                    static_cast<unsigned long long>(count_since(sh.deliver_ns, first + sent)),
                    static_cast<unsigned long long>(sh.errors.load() - errors0));
      progress(line);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const double send_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const uint64_t end = first + sent;
  next_index_ = end;

  // Drain: wait for the deliveries still in flight (bounded).
  const auto drain_until = Clock::now() + std::chrono::duration<double>(drain_seconds);
  while (Clock::now() < drain_until && count_since(sh.deliver_ns, end) < sent) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (Clock::now() >= next_report) {
      // The progress line goes on while the backlog drains (a saturated step is never silent).
      next_report += std::chrono::seconds(1);
      char line[200];
      std::snprintf(line, sizeof line, "  t=%4.0fs  draining: acked=%-8llu delivered=%-8llu of %llu",
                    std::chrono::duration<double>(Clock::now() - start).count(),
                    static_cast<unsigned long long>(count_since(sh.ack_ns, end)),
                    static_cast<unsigned long long>(count_since(sh.deliver_ns, end)),
                    static_cast<unsigned long long>(sent));
      progress(line);
    }
  }
  const auto after = server_counters(options_);
  const auto cpu_after = cpu_of(options_.processes);
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  std::optional<Result<std::vector<std::pair<std::string, double>>>> engine_after;
  if (engine_before) engine_after = engine_sample(options_.engine_counters_command);

  StepResult r;
  r.config = options_.config;
  r.offered_rate = rate;
  r.seconds = send_seconds;
  r.sent = sent;
  r.errors = sh.errors.load() - errors0;
  r.disconnects = sh.disconnects.load() - disconnects0;
  if (sent > 0) r.syncs_per_msg = static_cast<double>(sh.syncs.load() - syncs0) / static_cast<double>(sent);
  std::vector<double> ack_ms, e2e_ms;
  for (uint64_t i = first; i < end; ++i) {
    const int64_t s = sh.sent_ns[i].load();
    if (int64_t a = sh.ack_ns[i].load(); a != 0) ack_ms.push_back((a - s) / 1e6);
    if (int64_t d = sh.deliver_ns[i].load(); d != 0) e2e_ms.push_back((d - s) / 1e6);
  }
  r.acked = ack_ms.size();
  r.delivered = e2e_ms.size();
  r.ack_p50_ms = percentile(ack_ms, 50);
  r.ack_p99_ms = percentile(ack_ms, 99);
  r.e2e_p50_ms = percentile(e2e_ms, 50);
  r.e2e_p99_ms = percentile(e2e_ms, 99);
  r.e2e_max_ms = e2e_ms.empty() ? 0 : e2e_ms.back();
  for (size_t p = 0; p < options_.processes.size() && wall > 0; ++p) {
    if (!cpu_before[p] || !cpu_after[p]) continue;
    r.process_cores.emplace_back(options_.processes[p].name, (*cpu_after[p] - *cpu_before[p]) / wall);
    if (options_.processes[p].qim)
      r.server_cores = r.server_cores.value_or(0) + r.process_cores.back().second;
  }
  if (before && after && sent > 0) {
    const double n = static_cast<double>(sent);
    r.inserts_per_msg = (after->inserts - before->inserts) / n;
    r.updates_per_msg = (after->updates - before->updates) / n;
    r.reads_per_msg = (after->reads - before->reads) / n;
    r.lwts_per_msg = (after->lwts - before->lwts) / n;
    r.history_inserts_per_msg = (after->history_inserts - before->history_inserts) / n;
    if (!options_.gateway_admin_ports.empty())
      r.sync_reads_per_msg = (after->sync_reads - before->sync_reads) / n;
    const double pages = after->pages - before->pages;
    if (pages > 0) r.mean_page = (after->paged - before->paged) / pages;
  }
  if (engine_before) {
    auto delta =
        !engine_before->ok()  ? Result<std::vector<std::pair<std::string, double>>>(engine_before->error())
        : !engine_after->ok() ? Result<std::vector<std::pair<std::string, double>>>(engine_after->error())
                              : per_message(**engine_before, **engine_after, sent);
    if (delta.ok()) {
      r.engine_per_msg = std::move(delta).value();
    } else {
      r.engine_error = delta.error().message();
      progress("  " + r.engine_error);
    }
  }
  std::lock_guard lock(sh.error_mu);
  if (!sh.first_error.empty()) progress("  first error: " + sh.first_error);
  return r;
}

}  // namespace qim::load
