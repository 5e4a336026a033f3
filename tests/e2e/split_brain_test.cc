// Split brain for real (issue 11, item 2): two `qim mailbox` processes own shard 0 at once, the stale one
// at epoch 1 and the new one at epoch 2, against Cassandra. The shard leases are bypassed on purpose:
// QIM_OWNED_SHARDS and QIM_EPOCH pin each node's shard and epoch (static ownership, no lease store), which
// is how an operator's mistake or a partitioned lease store looks to the store. The test plays fanout:
// it appends the same dispatch records to each node's mailbox log (a Kafka topic per node, so the
// offsets match), except that for two ids the stale owner's copy carries another payload.
// Checked through a fresh store and a fresh audit reader: readers never see the stale owner's entries
// beyond its own epoch's frontier; nothing acknowledged is lost; each message shows once per epoch that
// wrote it, with the new owner's payload at the new epoch, and a client (the C++ loop, fed the SYNC
// pages the gateway would send) shows each of the 20 messages exactly once (it skips a message id it
// already showed: docs/protocol.md);
// `qim admin audit dispatch` finds exactly the injected conflicts, and nothing on the clean run.
//
// Needs QIM_TEST_CQL_HOSTS and QIM_TEST_KAFKA_BROKERS (label split-brain); skips naming them otherwise.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <set>
#include <thread>

#include "client/frames.h"
#include "client/mailbox_feed.h"
#include "e2e/qim_process.h"
#include "fanout/dispatch_plan.h"
#include "gateway/protocol/client_frame.h"
#include "gateway/protocol/server_frame.h"
#include "log/open_log.h"
#include "mailbox/message_codec.h"
#include "mailbox/open_audit_reader.h"
#include "mailbox/scylla/cql/cql_session.h"
#include "mailbox/tests/contract_helpers.h"
#include "ops/dispatch_audit.h"

namespace qim::e2e {
namespace {

using namespace std::chrono_literals;
using test::make_message;
using test::user_in_shard;

constexpr uint32_t kShards = 2;
const ShardMap kMap = *ShardMap::create(kShards);

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before any thread starts
  return v ? v : "";
}

// Polls `done` until it holds or `limit` passes; false on timeout.
bool eventually(const std::function<bool()>& done, std::chrono::seconds limit = 60s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return done();
}

class SplitBrain : public ::testing::Test {
 protected:
  void SetUp() override {
    cql_ = env_or_empty("QIM_TEST_CQL_HOSTS");
    kafka_ = env_or_empty("QIM_TEST_KAFKA_BROKERS");
    if (cql_.empty()) GTEST_SKIP() << "QIM_TEST_CQL_HOSTS is unset: no CQL cluster for the split-brain test";
    if (kafka_.empty()) GTEST_SKIP() << "QIM_TEST_KAFKA_BROKERS is unset: no Kafka for the split-brain test";
    const std::string run = std::to_string(::getpid()) + "_" + std::to_string(next_++);
    keyspace_ = "qim_sb_" + run;
    options_.backend = "scylla";
    options_.shard_count = kShards;
    options_.cql_hosts = cql::split_hosts(cql_);
    options_.cql_keyspace = keyspace_;
    for (int i = 0; i < 3; ++i) users_.push_back(user_in_shard(kMap, ShardId{0}, i));
    for (const char* owner : {"stale", "new"}) {
      const std::string prefix = "qim-sb." + run + "." + owner + ".";
      LogOptions lo;
      lo.backend = "kafka";
      lo.kafka_brokers = cql::split_hosts(kafka_);
      lo.kafka_topic_prefix = prefix;
      auto log = open_log(lo, "mailbox", kShards, nullptr);
      ASSERT_TRUE(log.ok()) << log.error().to_string();
      logs_[owner] = std::move(*log);
      prefixes_[owner] = prefix;
    }
  }

  void TearDown() override {
    for (auto& [name, node] : nodes_) node->stop(30s);
    nodes_.clear();
    if (!keyspace_.empty() && !cql_.empty()) {
      auto admin = cql::Session::connect({.hosts = cql::split_hosts(cql_)});
      if (admin.ok())
        (void)admin->query("DROP KEYSPACE IF EXISTS " + keyspace_, {},
                           cql::ExecOptions{.timeout_ms = 60'000});
    }
  }

  // Message `n` to every user, as fanout plans it for shard 0 ("m<n>-s0").
  DispatchRecord record(uint64_t n, const std::string& body) {
    DispatchRecord r;
    r.message = make_message(n, users_[0], 1'700'000'000'000 + static_cast<int64_t>(n));
    r.message.body = body;
    r.chunks = {users_};
    r.identity = make_identity(dispatch_id_for(MessageId{n}, ShardId{0}), r.message, r.chunks);
    return r;
  }

  // Appends messages [first, last] to `owners`' logs, the stale owner's copy of each id in `diverging`
  // with another body. Offsets match: every log receives the same sequence.
  void feed(const std::vector<std::string>& owners, uint64_t first, uint64_t last,
            const std::set<uint64_t>& diverging) {
    for (uint64_t n = first; n <= last; ++n) {
      for (const std::string& owner : owners) {
        const bool bent = owner == "stale" && diverging.contains(n);
        const DispatchRecord r =
            record(n, bent ? "stale payload " + std::to_string(n) : "message " + std::to_string(n));
        std::promise<Result<Offset>> done;
        logs_[owner]->append(0, r.identity.id.str(), encode_dispatch_record(r),
                             [&done](Result<Offset> o) { done.set_value(std::move(o)); });
        auto offset = done.get_future().get();
        ASSERT_TRUE(offset.ok()) << offset.error().to_string();
        ASSERT_EQ(offset->value, n - 1) << owner;  // message n at offset n-1 on every log
      }
    }
  }

  void start_node(const std::string& owner, uint32_t epoch) {
    auto node = std::make_unique<QimProcess>(QIM_BINARY, make_temp_dir("qim-sb-" + owner),
                                             Env{{"QIM_LOG_BACKEND", "kafka"},
                                                 {"QIM_KAFKA_BROKERS", kafka_},
                                                 {"QIM_KAFKA_TOPIC_PREFIX", prefixes_[owner]},
                                                 {"QIM_MAILBOX_STORE_BACKEND", "scylla"},
                                                 {"QIM_CQL_HOSTS", cql_},
                                                 {"QIM_CQL_KEYSPACE", keyspace_},
                                                 {"QIM_SHARDS", std::to_string(kShards)},
                                                 {"QIM_OWNED_SHARDS", "0"},  // pinned: no lease
                                                 {"QIM_EPOCH", std::to_string(epoch)},
                                                 {"QIM_DELIVERY_MODE", "pull"},
                                                 {"QIM_ADMIN_PORT", "0"},
                                                 {"QIM_NODE_ID", "sb-" + owner}},
                                             "mailbox");
    node->keep_data_if([] { return ::testing::Test::HasFailure(); });
    Status s = node->start();
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    nodes_[owner] = std::move(node);
  }

  // The frontier rows of shard 0 by epoch, through a fresh audit reader.
  std::map<uint32_t, uint64_t> frontiers() {
    std::map<uint32_t, uint64_t> out;
    auto reader = open_audit_reader(options_);
    if (!reader.ok()) return out;
    RowPacer pacer(100'000, {});
    (void)(*reader)->frontiers(
        {ShardId{0}}, pacer,
        [&](const AuditFrontierRow& r) -> Status {
          if (r.shard.value == 0) out[r.epoch.value] = r.offset.value;
          return {};
        },
        [](const AuditCorruptRow&) {});
    return out;
  }

  bool frontier_at(uint32_t epoch, uint64_t offset) {
    auto f = frontiers();
    return f.contains(epoch) && f[epoch] >= offset;
  }

  // What a client shows: the loop of docs/protocol.md (client::MailboxFeed) fed the SYNC pages the
  // gateway would send (read_mailbox, encoded as the gateway encodes them, parsed by the client): each of
  // the 20 messages exactly once, though messages 1..10 are stored at epoch 1 and at epoch 2.
  void expect_a_client_shows_each_once(MailboxStore& store, const UserId& u) {
    client::MailboxFeed feed(client::MailboxFeed::Options{.cursor = 0, .sync_limit = 7});
    std::map<uint64_t, int> shown;  // message id -> times shown
    auto take = [&](client::MailboxFeed::Actions a) {
      for (const auto& e : a.show) shown[e.message_id]++;
      return a.send;
    };
    FrameParser parser;  // the gateway's: what the client asked for
    auto request = take(feed.start());
    for (int pages = 0; request && pages < 100; ++pages) {
      auto parsed = parser.parse(*request, FrameLimits{});
      ASSERT_TRUE(std::holds_alternative<ClientFrame>(parsed)) << *request;
      const auto* sync = std::get_if<SyncFrame>(&std::get<ClientFrame>(parsed).body);
      ASSERT_NE(sync, nullptr) << *request;
      auto page = store.read_mailbox(MailboxQuery{u, sync->after, sync->limit});
      ASSERT_TRUE(page.ok()) << page.error().to_string();
      auto frame = client::parse_server_frame(encode_sync_page(feed.outstanding_ref(), *page));
      ASSERT_TRUE(frame.ok()) << frame.error().to_string();
      request = take(feed.on_frame(*frame));
    }
    EXPECT_FALSE(feed.syncing()) << u.str() << ": the SYNC run never ended";
    ASSERT_EQ(shown.size(), 20u) << u.str();
    for (uint64_t n = 1; n <= 20; ++n)
      EXPECT_EQ(shown[n], 1) << u.str() << ": message " << n << " shown " << shown[n] << " times";
    EXPECT_GE(feed.duplicates(), 10u) << u.str() << ": the copies of messages 1..10 at epoch 1";
  }

  // The whole scenario; returns the audit of the result.
  AuditReport run(const std::set<uint64_t>& diverging) {
    // Both owners start on an empty shard, each sure it owns it: split brain from the start.
    start_node("stale", 1);
    start_node("new", 2);
    // The stale owner materialises messages 1..10 first (with its own payload for the diverging ids) ...
    feed({"stale"}, 1, 10, diverging);
    EXPECT_TRUE(eventually([&] { return frontier_at(1, 9); })) << "the stale owner never finished 1..10";
    // ... then the new owner the same records at epoch 2, while the stale one still runs ...
    feed({"new"}, 1, 10, {});
    EXPECT_TRUE(eventually([&] { return frontier_at(2, 9); })) << "the new owner never finished 1..10";
    // ... and both are fed 11..20: the stale owner fences itself once it sees epoch 2 (within the store's
    // fence bound), having written some of them or none.
    feed({"stale", "new"}, 11, 20, {});
    EXPECT_TRUE(eventually([&] { return frontier_at(2, 19); })) << "the new owner never finished 11..20";
    for (auto& [name, node] : nodes_) node->stop(30s);

    const auto f = frontiers();
    EXPECT_EQ(f.size(), 2u);
    const uint64_t stale_frontier = f.contains(1) ? f.at(1) : 0;
    // A fresh reader: what clients are shown.
    auto store = open_mailbox_store(options_);
    EXPECT_TRUE(store.ok()) << store.error().to_string();
    if (!store.ok()) return {};
    for (const UserId& u : users_) {
      auto entries = test::read_all(**store, u);
      EXPECT_TRUE(entries.ok()) << entries.error().to_string();
      if (!entries.ok()) continue;
      std::map<uint32_t, std::set<uint64_t>> by_epoch;  // epoch -> message ids shown
      for (const MailboxEntry& e : *entries) {
        const uint32_t epoch = e.seq.epoch().value;
        EXPECT_TRUE(by_epoch[epoch].insert(e.message.id.value).second)
            << u.str() << ": message " << e.message.id.value << " twice at epoch " << epoch;
        if (epoch == 1) {
          EXPECT_LE(e.seq.offset().value, stale_frontier) << "a stale entry above its own epoch's frontier";
        } else {
          EXPECT_EQ(epoch, 2u);
          EXPECT_EQ(e.message.body, "message " + std::to_string(e.message.id.value)) << "new owner's payload";
          EXPECT_EQ(e.seq.offset().value, e.message.id.value - 1);
        }
      }
      // Nothing acknowledged lost: the new owner's frontier covers 20 records, all shown at epoch 2.
      std::set<uint64_t> all;
      for (uint64_t n = 1; n <= 20; ++n) all.insert(n);
      EXPECT_EQ(by_epoch[2], all) << u.str();
      // The stale owner's acknowledged batch 1 is stored too: the client must skip the second copies.
      for (uint64_t n = 1; n <= 10; ++n) EXPECT_TRUE(by_epoch[1].contains(n)) << u.str() << " message " << n;

      expect_a_client_shows_each_once(**store, u);
    }
    auto reader = open_audit_reader(options_);
    EXPECT_TRUE(reader.ok());
    if (!reader.ok()) return {};
    auto report = audit_dispatch(**reader, AuditRequest{kMap, {}, 100'000, {}});
    EXPECT_TRUE(report.ok()) << report.error().to_string();
    return report.ok() ? *report : AuditReport{};
  }

  static inline std::atomic<int> next_{0};
  std::string cql_, kafka_, keyspace_;
  StoreOptions options_;
  std::vector<UserId> users_;
  std::map<std::string, std::unique_ptr<Log>> logs_;
  std::map<std::string, std::string> prefixes_;
  std::map<std::string, std::unique_ptr<QimProcess>> nodes_;
};

TEST_F(SplitBrain, AuditFindsExactlyTheInjectedConflicts) {
  const AuditReport report = run({3, 7});
  std::cout << render_audit_table(report);
  ASSERT_EQ(report.findings.size(), 2u) << render_audit_table(report);
  EXPECT_EQ(report.findings[0].kind, AuditFindingKind::kIdentityConflict);
  EXPECT_EQ(report.findings[0].dispatch_id, "m3-s0");
  EXPECT_EQ(report.findings[1].kind, AuditFindingKind::kIdentityConflict);
  EXPECT_EQ(report.findings[1].dispatch_id, "m7-s0");
  // The qim binary says the same, with a non-zero exit.
  const std::string cmd = std::string("env QIM_MAILBOX_STORE_BACKEND=scylla QIM_CQL_HOSTS='") + cql_ +
                          "' QIM_CQL_KEYSPACE=" + keyspace_ + " QIM_SHARDS=2 '" + QIM_BINARY +
                          "' admin audit dispatch --all --json >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe)
  EXPECT_EQ(WEXITSTATUS(status), 3);
}

TEST_F(SplitBrain, CleanRunHasNoFindings) {
  const AuditReport report = run({});
  EXPECT_TRUE(report.findings.empty()) << render_audit_table(report);
  EXPECT_GE(report.counts.identity_rows, 30u);  // 10 at epoch 1 at least, 20 at epoch 2
}

}  // namespace
}  // namespace qim::e2e
