// qim-store-bench: drives one-to-one records through the whole MailboxStore contract as a shard worker
// does (begin_dispatch, write_chunks, finish_dispatch_page with pages taken from the shard's queue, up to
// finish_page_limit(), never waiting to fill one) and prints one Markdown table row: records per second,
// mean page, and store operations per record by kind, as ADR-0022 counts them.
//
// The main thread plays fanout and one worker thread per shard the MailboxNode (bench/store/
// dispatch_driver.h): each record goes to its recipients' shards, one dispatch record per shard.
// The store is opened by name through open_mailbox_store, so every backend built in works unchanged;
// server backends take their endpoints from the usual QIM_* variables. With --inbox the engine's inbox
// (open_inbox) is the store's EntrySink, and its operations are counted in columns of their own.
#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "bench/store/dispatch_driver.h"
#include "inbox/open_inbox.h"
#include "mailbox/store_options.h"

namespace qim {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchOptions {
  std::string backend = "embedded";
  uint64_t records = 20'000;
  uint32_t page_limit = 64;
  uint32_t recipients = 2;
  uint32_t shards = 1;
  uint32_t users = 1'000;
  double rate = 0;  // records per second offered; 0: as fast as the store takes them
  std::string data_dir;
  bool header = true;
  bool warmup = false;  // first send one unmeasured message from every user (warms per-user-and-day caches)
  bool inbox = false;   // open the engine's inbox as the store's EntrySink (written beside the entries)
};

[[noreturn]] void fail(const std::string& what, const Error& e) {
  fmt::print(stderr, "\nqim-store-bench: {}: {}\n", what, e.to_string());
  std::exit(1);
}

template <typename T>
T must(Result<T> r, const std::string& what) {
  if (!r.ok()) fail(what, r.error());
  return std::move(r).value();
}

void must(const Status& s, const std::string& what) {
  if (!s.ok()) fail(what, s.error());
}

// Fanout: record i goes from one user to recipients-1 others; one dispatch record per shard touched.
Status produce(const BenchOptions& o, const std::string& run_id, DispatchDriver& driver) {
  std::vector<UserId> users;
  for (uint32_t u = 0; u < o.users; ++u) users.push_back(*UserId::parse("bench-user-" + std::to_string(u)));
  const auto start = Clock::now();
  for (uint64_t i = 0; i < o.records; ++i) {
    if (o.rate > 0) std::this_thread::sleep_until(start + std::chrono::duration<double>(i / o.rate));
    const UserId& sender = users[(i * o.recipients) % users.size()];
    std::vector<UserId> recipients{sender};  // the sender's own mailbox (other devices)
    for (uint32_t r = 1; r < o.recipients; ++r)
      recipients.push_back(users[(i * o.recipients + r) % users.size()]);
    Message m;
    m.id = MessageId{i};
    m.sender = sender;
    m.conversation = *direct_conversation(sender, *UserId::parse("bench" + std::to_string(i % 997)));
    m.client_msg_id = fmt::format("c{}", i);
    m.server_time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
    m.body = fmt::format("benchmark message {} of run {}", i, run_id);
    QIM_RETURN_IF_ERROR(driver.send(m, recipients, run_id));
  }
  return driver.finish();
}

int run(const BenchOptions& o) {
  auto env = store_options_from_env(process_env());
  if (!env.ok()) fail("configuration", env.error());
  StoreOptions options = std::move(env).value();
  options.backend = o.backend;
  options.shard_count = o.shards;
  options.page_max = o.page_limit;
  std::string temp_dir;
  if (!o.data_dir.empty()) {
    options.data_dir = o.data_dir;
  } else if (o.backend == "embedded") {
    std::string pattern = (std::filesystem::temp_directory_path() / "qim-store-bench-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) fail("temp dir", Error(Errc::kIo, "mkdtemp " + pattern));
    temp_dir = pattern;
    options.data_dir = temp_dir + "/mailbox";
  }
  const ShardMap shards = must(ShardMap::create(o.shards), "--shards");
  // --inbox: the inbox of the same engine as the store's EntrySink, as `qim up` and the MailboxNode open
  // it (the embedded one beside the mailbox's directory); it outlives the store that holds it.
  std::unique_ptr<InboxBackend> inbox;
  if (o.inbox) {
    inbox = must(open_inbox(options, std::filesystem::path(options.data_dir).parent_path().string()),
                 "open the inbox");
  }
  std::unique_ptr<MailboxStore> store = must(open_mailbox_store(options, inbox.get()), "open " + o.backend);
  const Epoch epoch{1};

  const std::string run_id = fmt::format(
      "b{}x{}", std::chrono::system_clock::now().time_since_epoch().count() % 1'000'000'007, getpid());
  // One pass of `records` messages: returns its duration in seconds.
  auto pass = [&](const BenchOptions& po, const std::string& pass_id) -> double {
    auto driver = must(DispatchDriver::start(*store, shards, epoch), "lane_watermarks");
    const auto start = Clock::now();
    std::atomic<bool> finished{false};
    std::thread progress([&] {
      while (!finished) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        const double secs = std::chrono::duration<double>(Clock::now() - start).count();
        const uint64_t done = driver->finished();
        fmt::print(stderr, "\r[qim-store-bench] {} page limit {}: {} dispatch records finished, {:.0f}/s   ",
                   po.backend, store->finish_page_limit(), done, done / std::max(secs, 1e-9));
      }
    });
    const Status produced = produce(po, pass_id, *driver);
    const double secs = std::chrono::duration<double>(Clock::now() - start).count();
    finished = true;
    progress.join();
    fmt::print(stderr, "\n");
    must(produced, "dispatch");
    return secs;
  };
  if (o.warmup) {
    BenchOptions warm = o;
    warm.records = o.users;  // every user sends once: ledger registrations happen here, unmeasured
    warm.rate = 0;
    fmt::print(stderr, "[qim-store-bench] warm-up: {} messages, one from every user\n", warm.records);
    pass(warm, run_id + "w");
  }
  const OpCounts before = store->op_counts();
  const OpCounts inbox_before = inbox ? inbox->counters().snapshot() : OpCounts{};
  const double secs = pass(o, run_id);

  const OpCounts d = store->op_counts() - before;
  const double n = static_cast<double>(o.records);
  if (o.header) {
    fmt::print(
        "| backend | page limit | inbox | records/s | mean page | inserts | updates | reads | LWT | scripts "
        "| "
        "inbox inserts | inbox updates | inbox reads | inbox LWT | inbox scripts |\n");
    fmt::print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  }
  // The inbox's operations apart from the store's, so a row with the inbox compares column by column
  // with the one without it.
  std::string inbox_cells = "- | - | - | - | -";
  if (inbox) {
    const OpCounts i = inbox->counters().snapshot() - inbox_before;
    inbox_cells = fmt::format("{:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f}", i.inserts / n, i.updates / n,
                              i.reads / n, i.lwts / n, i.scripts / n);
  }
  fmt::print("| {} | {} | {} | {:.0f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {} |\n",
             store->backend_name(), store->finish_page_limit(), inbox ? inbox->name() : "none", n / secs,
             d.mean_page(), d.inserts / n, d.updates / n, d.reads / n, d.lwts / n, d.scripts / n,
             inbox_cells);
  store.reset();
  inbox.reset();
  if (!temp_dir.empty()) std::filesystem::remove_all(temp_dir);
  return 0;
}

}  // namespace
}  // namespace qim

int main(int argc, char** argv) {
  qim::BenchOptions o;
  CLI::App app{"qim-store-bench: one-to-one records through the MailboxStore contract"};
  app.add_option("--backend", o.backend, "memory, embedded, redis, scylla, scylla-lwt (as built in)");
  app.add_option("--records", o.records, "records (messages) to send")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  app.add_option("--page-limit", o.page_limit, "QIM_MAILBOX_FINISH_PAGE_MAX: lowers the store's page limit")
      ->check(CLI::Range(1, 1024));
  app.add_option("--recipients-per-record", o.recipients, "mailboxes per record, the sender's own included")
      ->check(CLI::Range(1, 1024));
  app.add_option("--shards", o.shards, "mailbox shards, one worker thread each")->check(CLI::Range(1, 64));
  app.add_option("--users", o.users, "distinct users records go between")->check(CLI::Range(2, 10'000'000));
  app.add_option("--rate", o.rate, "records per second offered (0: as fast as the store takes them)")
      ->check(CLI::Range(0.0, 1e9));
  app.add_option("--data-dir", o.data_dir, "embedded: keep the store here (default: a temporary directory)");
  app.add_flag("!--no-header", o.header, "print only the table row");
  app.add_flag("--inbox", o.inbox, "write the inbox beside the entries (the same engine's, as qim up does)");
  app.add_flag("--warmup", o.warmup, "first send one unmeasured message from every user (warm caches)");
  CLI11_PARSE(app, argc, argv);
  return qim::run(o);
}
