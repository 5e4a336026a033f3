// qim-store-bench: drives one-to-one records through the whole MailboxStore contract as a shard worker
// does (begin_dispatch, write_chunks, finish_dispatch_page with pages taken from the shard's queue, up to
// finish_page_limit(), never waiting to fill one) and prints one Markdown table row: records per second,
// mean page, and store operations per record by kind, as ADR-0022 counts them.
//
// A producer thread plays fanout: each record goes to its recipients' shards, one dispatch record per
// shard, appended to that shard's queue at the next offset. One worker thread per shard drains its queue.
// The store is opened by name through open_mailbox_store, so every backend built in works unchanged;
// server backends take their endpoints from the usual QIM_* variables.
#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

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
};

// One shard's mailbox-log partition as the worker sees it: records queued in offset order.
struct QueuedRecord {
  DispatchRecord record;
  Offset offset;
};

class ShardQueue {
 public:
  static constexpr size_t kMaxQueued = 4096;  // the producer waits beyond this, like a bounded consumer

  void push(QueuedRecord r) {
    std::unique_lock lock(mu_);
    space_.wait(lock, [&] { return items_.size() < kMaxQueued; });
    items_.push_back(std::move(r));
    ready_.notify_one();
  }
  void close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    ready_.notify_all();
  }
  // Up to `limit` queued records; waits only while the queue is empty. Empty once closed and drained.
  std::vector<QueuedRecord> take(size_t limit) {
    std::unique_lock lock(mu_);
    ready_.wait(lock, [&] { return !items_.empty() || closed_; });
    std::vector<QueuedRecord> out;
    while (!items_.empty() && out.size() < limit) {
      out.push_back(std::move(items_.front()));
      items_.pop_front();
    }
    space_.notify_all();
    return out;
  }

 private:
  std::mutex mu_;
  std::condition_variable ready_, space_;
  std::deque<QueuedRecord> items_;
  bool closed_ = false;
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

// The shard worker: takes pages from the queue, begins them (identity reads and writes together), writes
// their entries, advances the frontier once.
void work_shard(MailboxStore& store, ShardId shard, Epoch epoch, ShardQueue& queue,
                std::atomic<uint64_t>& done) {
  MailboxSeq frontier = must(store.lane_watermarks(shard, epoch), "lane_watermarks")[0];
  for (;;) {
    std::vector<QueuedRecord> page = queue.take(store.finish_page_limit());
    if (page.empty()) return;
    std::vector<ChunkWrite> writes;
    std::vector<PageItem> items;
    MailboxSeq running = frontier;
    std::vector<BeginRequest> requests;
    for (const auto& q : page) requests.push_back(BeginRequest{&q.record.identity, q.offset});
    auto outcomes = must(store.begin_dispatch_page(shard, epoch, requests), "begin_dispatch_page");
    for (size_t i = 0; i < page.size(); ++i) {
      const QueuedRecord& q = page[i];
      const BeginOutcome begun = must(outcomes[i], "begin");
      if (begun.needs_entries) {
        for (uint32_t c = 0; c < q.record.chunks.size(); ++c) {
          writes.push_back(ChunkWrite{q.record.identity.id, c, &q.record.message, q.record.chunks[c]});
        }
      }
      const MailboxSeq observed = must(compose(epoch, q.offset), "compose");
      items.push_back(PageItem{q.record.identity.id, uniform_advances(running, observed)});
      if (begun.canonical && begun.seq > running) running = observed;
    }
    must(store.write_chunks(shard, epoch, writes), "write_chunks");  // the whole page's entries at once
    frontier = must(store.finish_dispatch_page(shard, epoch, items), "finish_dispatch_page").frontier;
    done += page.size();
  }
}

// Fanout: record i goes from one user to recipients-1 others; one dispatch record per shard touched.
void produce(const BenchOptions& o, const ShardMap& shards, const std::string& run_id,
             std::vector<uint64_t> next_offset, std::vector<std::unique_ptr<ShardQueue>>& queues) {
  std::vector<UserId> users;
  for (uint32_t u = 0; u < o.users; ++u) users.push_back(*UserId::parse("bench-user-" + std::to_string(u)));
  const auto start = Clock::now();
  for (uint64_t i = 0; i < o.records; ++i) {
    if (o.rate > 0) std::this_thread::sleep_until(start + std::chrono::duration<double>(i / o.rate));
    const UserId& sender = users[(i * o.recipients) % users.size()];
    std::map<uint32_t, std::vector<UserId>> by_shard;
    by_shard[shards.shard_of(sender).value].push_back(sender);  // the sender's own mailbox (other devices)
    for (uint32_t r = 1; r < o.recipients; ++r) {
      const UserId& to = users[(i * o.recipients + r) % users.size()];
      by_shard[shards.shard_of(to).value].push_back(to);
    }
    Message m;
    m.id = MessageId{i};
    m.sender = sender;
    m.conversation = *direct_conversation(sender, *UserId::parse("bench" + std::to_string(i % 997)));
    m.client_msg_id = fmt::format("c{}", i);
    m.server_time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
    m.body = fmt::format("benchmark message {} of run {}", i, run_id);
    for (auto& [shard, recipients] : by_shard) {
      std::vector<std::vector<UserId>> chunks;
      for (size_t from = 0; from < recipients.size(); from += kMaxChunkEntries) {
        const size_t to = std::min(recipients.size(), from + kMaxChunkEntries);
        chunks.emplace_back(recipients.begin() + from, recipients.begin() + to);
      }
      auto id = *DispatchId::parse(fmt::format("{}-m{}-s{}", run_id, i, shard));
      DispatchIdentity identity = make_identity(std::move(id), m, chunks);
      queues[shard]->push(QueuedRecord{DispatchRecord{std::move(identity), m, std::move(chunks)},
                                       Offset{next_offset[shard]++}});
    }
  }
  for (auto& q : queues) q->close();
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
  std::unique_ptr<MailboxStore> store = must(open_mailbox_store(options), "open " + o.backend);
  const Epoch epoch{1};

  const std::string run_id = fmt::format(
      "b{}x{}", std::chrono::system_clock::now().time_since_epoch().count() % 1'000'000'007, getpid());
  // One pass of `records` messages: returns its duration in seconds.
  auto pass = [&](const BenchOptions& po, const std::string& pass_id) -> double {
    // Continue each shard after what is stored, so a kept data directory or server can be reused.
    std::vector<uint64_t> next_offset;
    std::vector<std::unique_ptr<ShardQueue>> queues;
    for (uint32_t s = 0; s < po.shards; ++s) {
      next_offset.push_back(
          must(store->lane_watermarks(ShardId{s}, epoch), "lane_watermarks")[0].offset().value + 1);
      queues.push_back(std::make_unique<ShardQueue>());
    }
    std::atomic<uint64_t> done{0};
    const auto start = Clock::now();
    std::vector<std::thread> workers;
    for (uint32_t s = 0; s < po.shards; ++s) {
      workers.emplace_back(work_shard, std::ref(*store), ShardId{s}, epoch, std::ref(*queues[s]),
                           std::ref(done));
    }
    std::thread producer(produce, std::cref(po), std::cref(shards), pass_id, next_offset, std::ref(queues));
    std::atomic<bool> finished{false};
    std::thread progress([&] {
      while (!finished) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        const double secs = std::chrono::duration<double>(Clock::now() - start).count();
        fmt::print(stderr, "\r[qim-store-bench] {} page limit {}: {} dispatch records finished, {:.0f}/s   ",
                   po.backend, store->finish_page_limit(), done.load(), done.load() / std::max(secs, 1e-9));
      }
    });
    producer.join();
    for (auto& w : workers) w.join();
    const double secs = std::chrono::duration<double>(Clock::now() - start).count();
    finished = true;
    progress.join();
    fmt::print(stderr, "\n");
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
  const double secs = pass(o, run_id);

  const OpCounts d = store->op_counts() - before;
  const double n = static_cast<double>(o.records);
  if (o.header) {
    fmt::print(
        "| backend | page limit | records/s | mean page | inserts | updates | reads | LWT | scripts |\n");
    fmt::print("|---|---|---|---|---|---|---|---|---|\n");
  }
  fmt::print("| {} | {} | {:.0f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} |\n",
             store->backend_name(), store->finish_page_limit(), n / secs, d.mean_page(), d.inserts / n,
             d.updates / n, d.reads / n, d.lwts / n, d.scripts / n);
  store.reset();
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
  app.add_flag("--warmup", o.warmup, "first send one unmeasured message from every user (warm caches)");
  CLI11_PARSE(app, argc, argv);
  return qim::run(o);
}
