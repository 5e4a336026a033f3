// qim_pipeline_bench: throughput of the in-process pipeline (Outbox append -> fanout -> node -> store),
// without the gateway. Prints messages/s, dispatch records materialised per second, and the mean page.
//
//   qim_pipeline_bench --store embedded --messages 20000 [--pairs 1000] [--one-shard] [--page-max N] [--rate
//   R]
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <condition_variable>
#include <thread>

#include "app/pipeline.h"
#include "core/clock.h"
#include "log/embedded/embedded_log.h"
#include "log/testing/temp_dir.h"
#include "outbox/outbox_record.h"

namespace {

using namespace qim;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string store = "embedded";
  uint64_t messages = 20'000;
  uint32_t pairs = 1'000;
  uint32_t shards = 16;
  uint32_t partitions = 16;
  bool one_shard = false;
  uint32_t page_max = 0;
  uint32_t rate = 0;  // messages per second offered; 0: as fast as the Outbox takes them
  size_t in_flight = 4'096;
};

// Users for the pairs: anywhere, or only users of shard 0 (a burst to one shard).
std::vector<UserId> pick_users(const Args& a) {
  const ShardMap shards = ShardMap::create(a.shards).value();
  std::vector<UserId> users;
  for (uint64_t i = 0; users.size() < 2ull * a.pairs; ++i) {
    UserId u = UserId::parse("bench" + std::to_string(i)).value();
    if (!a.one_shard || shards.shard_of(u).value == 0) users.push_back(std::move(u));
  }
  return users;
}

int run(const Args& a) {
  qim::testing::TempDir dir;
  AppConfig c;
  c.data_dir = dir.path();
  c.log.data_dir = dir.path();
  c.store.backend = a.store;
  c.store.data_dir = dir.sub("mailbox");
  c.store.shard_count = a.shards;
  if (a.page_max) c.store.page_max = a.page_max;
  c.shards = a.shards;
  c.outbox_partitions = a.partitions;
  for (uint32_t s = 0; s < a.shards; ++s) c.owned_shards.push_back(ShardId{s});
  auto opened = Pipeline::open(c, PipelineRoles{true, true, false}, nullptr);
  if (!opened.ok()) {
    fmt::print(stderr, "{}\n", opened.error().to_string());
    return 1;
  }
  Pipeline& p = **opened;
  if (Status s = p.start(); !s.ok()) {
    fmt::print(stderr, "{}\n", s.error().to_string());
    return 1;
  }
  const auto users = pick_users(a);
  std::mutex mu;
  std::condition_variable cv;
  size_t in_flight = 0;
  std::atomic<uint64_t> failed{0};
  const auto start = Clock::now();
  for (uint64_t i = 0; i < a.messages; ++i) {
    const size_t pair = i % a.pairs;
    OutboxRecord r;
    r.sender = users[2 * pair + (i / a.pairs) % 2];
    r.conversation = direct_conversation(users[2 * pair], users[2 * pair + 1]).value();
    r.client_msg_id = "b" + std::to_string(i);
    r.server_time_ms = SystemClock().now_ms();  // within retention, so the node's sweep leaves it alone
    r.body = "benchmark message body of a typical length, about sixty bytes";
    if (a.rate > 0) std::this_thread::sleep_until(start + std::chrono::microseconds(i * 1'000'000 / a.rate));
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return in_flight < a.in_flight; });
      ++in_flight;
    }
    p.outbox().append(outbox_partition_of(r.conversation, a.partitions), r.conversation.str(),
                      encode_outbox_record(r), [&](Result<Offset> res) {
                        if (!res.ok()) failed++;
                        std::lock_guard lock(mu);
                        --in_flight;
                        cv.notify_all();
                      });
  }
  const auto appended = Clock::now();
  // Done when fanout has taken every message and the node has finished every dispatch record.
  while (true) {
    const auto f = p.fanout()->metrics();
    const ShardMetrics t = total(p.node()->metrics());
    if (f.records + f.skipped >= a.messages && t.records >= f.dispatches && t.lag == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const auto done = Clock::now();
  const auto f = p.fanout()->metrics();
  const ShardMetrics t = total(p.node()->metrics());
  const OpCounts ops = p.store().op_counts();
  const double secs = std::chrono::duration<double>(done - start).count();
  const auto* outbox = dynamic_cast<EmbeddedLog*>(&p.outbox());
  const auto* mlog = dynamic_cast<EmbeddedLog*>(&p.mailbox_log());
  fmt::print("store={} page_limit={} messages={} pairs={} one_shard={} offered={} failed_appends={}\n",
             a.store, p.store().finish_page_limit(), a.messages, a.pairs, a.one_shard,
             a.rate ? std::to_string(a.rate) + " msg/s" : "unpaced", failed.load());
  fmt::print("  outbox appends: {:.0f} msg/s (group commit: mean batch {:.1f})\n",
             a.messages / std::chrono::duration<double>(appended - start).count(),
             outbox->stats().mean_batch());
  fmt::print("  end to end: {:.2f} s, {:.0f} msg/s, {:.0f} dispatch records/s, {:.0f} entries/s\n", secs,
             a.messages / secs, t.records / secs, 2.0 * a.messages / secs);
  fmt::print("  node: {} records, {} pages, mean page {:.2f}; mailbox log mean batch {:.1f}\n", t.records,
             t.pages, t.mean_page(), mlog->stats().mean_batch());
  fmt::print("  store ops per message: inserts {:.2f} updates {:.2f} reads {:.2f} frontier writes {:.2f}\n",
             double(ops.inserts) / a.messages, double(ops.updates) / a.messages,
             double(ops.reads) / a.messages, double(ops.frontier_writes) / a.messages);
  fmt::print("  fanout: {} dispatch records\n", f.dispatches);
  (void)p.shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"Throughput of the in-process QIM pipeline (no gateway)"};
  app.add_option("--store", a.store, "memory or embedded")->capture_default_str();
  app.add_option("--messages", a.messages, "messages to send")->capture_default_str();
  app.add_option("--pairs", a.pairs, "one-to-one conversations")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--shards", a.shards, "shards")->capture_default_str();
  app.add_option("--partitions", a.partitions, "Outbox partitions")->capture_default_str();
  app.add_flag("--one-shard", a.one_shard, "every user on shard 0 (a burst to one shard)");
  app.add_option("--page-max", a.page_max, "QIM_MAILBOX_FINISH_PAGE_MAX (lower the page limit)");
  app.add_option("--rate", a.rate, "offered messages per second (default: unpaced)");
  CLI11_PARSE(app, argc, argv);
  return run(a);
}
