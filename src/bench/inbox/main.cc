// qim-inbox-bench: the inbox's reads for one user with many conversations, on one engine (inbox_run.h).
// Opens the engine's inbox (open_inbox) and the mailbox store with the inbox as its EntrySink, as `qim up`
// and the MailboxNode do; server engines take their endpoints from the usual QIM_* variables. Prints one
// Markdown row per operation, then a line "fill <backend> <messages> <seconds>"; exit code 3 when an
// answer was wrong (the row's `check` says which), 1 when the run could not be made.
#include <fmt/format.h>
#include <stdlib.h>
#include <CLI/CLI.hpp>

#include <filesystem>

#include "bench/inbox/inbox_run.h"
#include "inbox/open_inbox.h"
#include "mailbox/store_options.h"

namespace qim {
namespace {

struct MainOptions {
  inbox_bench::Options run;
  uint32_t shards = 4;
  std::string data_dir;
  bool header = true;
};

int fail(const std::string& what, const Error& e) {
  fmt::print(stderr, "\nqim-inbox-bench: {}: {}\n", what, e.to_string());
  return 1;
}

int run(const MainOptions& o) {
  auto env = store_options_from_env(process_env());
  if (!env.ok()) return fail("configuration", env.error());
  StoreOptions options = std::move(env).value();
  options.backend = o.run.backend;
  options.shard_count = o.shards;
  std::string temp_dir, data_dir = o.data_dir;
  if (data_dir.empty()) {
    std::string pattern = (std::filesystem::temp_directory_path() / "qim-inbox-bench-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) return fail("temp dir", Error(Errc::kIo, "mkdtemp " + pattern));
    temp_dir = data_dir = pattern;
  }
  options.data_dir = data_dir + "/mailbox";
  auto shards = ShardMap::create(o.shards);
  if (!shards.ok()) return fail("--shards", shards.error());
  Result<inbox_bench::Report> report = Error(Errc::kInvariant, "not run");
  {
    // The inbox first: the store holds it as its sink, so it outlives the store.
    auto inbox = open_inbox(options, data_dir);
    if (!inbox.ok()) return fail("open the inbox", inbox.error());
    auto store = open_mailbox_store(options, inbox->get());
    if (!store.ok()) return fail("open " + o.run.backend, store.error());
    report = inbox_bench::run(o.run, **store, **inbox, *shards);
  }
  if (!temp_dir.empty()) std::filesystem::remove_all(temp_dir);
  if (!report.ok()) return fail("run", report.error());

  if (o.header) {
    fmt::print(
        "| backend | operation | calls | P50 ms | P99 ms | max ms | client CPU ms per call | reads per call "
        "| "
        "target | check |\n");
    fmt::print("|---|---|---|---|---|---|---|---|---|---|\n");
  }
  for (const inbox_bench::Series& s : report->series) {
    fmt::print("| {} | {} | {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.1f} | {} | {} |\n", o.run.backend,
               s.operation, s.calls, s.p50_ms, s.p99_ms, s.max_ms, s.cpu_ms_per_call, s.reads_per_call,
               inbox_bench::target_of(o.run.backend, s), s.check);
  }
  fmt::print("fill {} {} {:.2f}\n", o.run.backend, report->messages, report->fill_seconds);
  return report->wrong() ? 3 : 0;
}

}  // namespace
}  // namespace qim

int main(int argc, char** argv) {
  qim::MainOptions o;
  qim::inbox_bench::Options& r = o.run;
  CLI::App app{"qim-inbox-bench: the inbox's reads for one user with many conversations"};
  app.add_option("--backend", r.backend, "the mailbox store: embedded, redis, scylla (the inbox follows it)");
  app.add_option("--conversations", r.conversations, "conversations of the user")
      ->check(CLI::Range(1u, 1'000'000u));
  app.add_option("--unread", r.unread, "messages (all unread) in the conversation timed by unread and read")
      ->check(CLI::Range(1u, 100'000u));
  app.add_option("--repetitions", r.repetitions, "measured calls per operation")
      ->check(CLI::Range(1u, 1'000'000u));
  app.add_option("--warmup", r.warmup, "unmeasured calls before each operation's series")
      ->check(CLI::Range(0u, 100'000u));
  app.add_option("--limit", r.limit, "the conversation page's size")->check(CLI::Range(1u, 200u));
  app.add_option("--shards", o.shards, "mailbox shards, one worker thread each while filling")
      ->check(CLI::Range(1u, 64u));
  app.add_option("--data-dir", o.data_dir,
                 "embedded: keep the store and the inbox here (default: a temporary directory)");
  app.add_flag("!--no-header", o.header, "print only the table rows");
  CLI11_PARSE(app, argc, argv);
  return qim::run(o);
}
