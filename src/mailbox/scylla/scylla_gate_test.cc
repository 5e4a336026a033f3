// The CQL contract gate of ADR-0022 ("Acceptance"): the frontier, identity and page checks (the retention
// ones are in scylla_gate_retention_test.cc; the fixture, its environment and its skip rules in
// scylla_gate_fixture.h).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <thread>

#include "mailbox/scylla/scylla_gate_fixture.h"

namespace qim {
namespace {

using test::fails_with;
using test::is_ok;
using test::seq_of;

TEST_F(ScyllaGate, ManifestNotFullyWrittenIsZeroAdvance) {
  auto r = record(1, 2);
  ASSERT_TRUE(is_ok(store_->begin_dispatch(shard_, Epoch{1}, r.identity, Offset{10})));
  ASSERT_TRUE(is_ok(store_->write_chunks(shard_, Epoch{1}, test::chunk_writes(r, {0}))));
  EXPECT_TRUE(fails_with(
      store_->finish_dispatch(shard_, Epoch{1}, r.identity.id, uniform_advances({}, seq_of(1, 10))),
      Errc::kIncomplete));
  EXPECT_EQ(*test::frontier_of(*store_, shard_, Epoch{1}), MailboxSeq{});
}

TEST_F(ScyllaGate, NonCanonicalFinalObservationIsZeroAdvance) {
  auto r = record(2);
  ASSERT_TRUE(is_ok(materialise(r, 10, {})));
  auto again = materialise(r, 12, seq_of(1, 10));
  ASSERT_TRUE(is_ok(again));
  EXPECT_FALSE(again->advanced);
  EXPECT_EQ(*test::frontier_of(*store_, shard_, Epoch{1}), seq_of(1, 10));
}

TEST_F(ScyllaGate, InconsistentExpectedPreviousAndSingleLaneAdvancesRefused) {
  auto r = record(3);
  ASSERT_TRUE(is_ok(store_->begin_dispatch(shard_, Epoch{1}, r.identity, Offset{5})));
  ASSERT_TRUE(is_ok(store_->write_chunks(shard_, Epoch{1}, test::chunk_writes(r))));
  auto advances = uniform_advances({}, seq_of(1, 5));
  advances[17].expected_previous = seq_of(1, 1);
  EXPECT_TRUE(
      fails_with(store_->finish_dispatch(shard_, Epoch{1}, r.identity.id, advances), Errc::kInvariant));
  LaneAdvances one = {LaneAdvance{Lane{3}, {}, seq_of(1, 5)}};
  EXPECT_TRUE(fails_with(store_->finish_dispatch(shard_, Epoch{1}, r.identity.id, one), Errc::kInvariant));
  EXPECT_EQ(*test::frontier_of(*store_, shard_, Epoch{1}), MailboxSeq{});
}

TEST_F(ScyllaGate, ChainedPageFinishesWithOneFrontierWrite) {
  std::vector<DispatchRecord> records;
  std::vector<PageItem> page;
  MailboxSeq prev;
  for (int i = 0; i < 5; ++i) {
    records.push_back(record(100 + i));
    const uint64_t offset = 20 + i;
    ASSERT_TRUE(is_ok(store_->begin_dispatch(shard_, Epoch{1}, records.back().identity, Offset{offset})));
    ASSERT_TRUE(is_ok(store_->write_chunks(shard_, Epoch{1}, test::chunk_writes(records.back()))));
    page.push_back(PageItem{records.back().identity.id, uniform_advances(prev, seq_of(1, offset))});
    prev = seq_of(1, offset);
  }
  const OpCounts before = store_->op_counts();
  auto out = store_->finish_dispatch_page(shard_, Epoch{1}, page);
  ASSERT_TRUE(is_ok(out));
  const OpCounts delta = store_->op_counts() - before;
  EXPECT_EQ(out->frontier_writes, 1u);
  EXPECT_EQ(delta.updates, 1u);  // the frontier, nothing else
  EXPECT_EQ(delta.lwts, 0u);
  EXPECT_EQ(*test::frontier_of(*store_, shard_, Epoch{1}), seq_of(1, 24));
}

// The page chains from a non-zero frontier; its second record breaks the chain. Nothing of the page is
// visible to a fresh reader although both records' entries are stored: only the frontier hides them.
TEST_F(ScyllaGate, BrokenChainIsWatermarkGapAndFrontierStays) {
  const UserId u = user(0);
  ASSERT_TRUE(is_ok(materialise(record(199), 25, {})));
  auto a = record(200), b = record(201);
  ASSERT_TRUE(is_ok(store_->begin_dispatch(shard_, Epoch{1}, a.identity, Offset{30})));
  ASSERT_TRUE(is_ok(store_->begin_dispatch(shard_, Epoch{1}, b.identity, Offset{31})));
  ASSERT_TRUE(is_ok(store_->write_chunks(shard_, Epoch{1}, test::chunk_writes(a))));
  ASSERT_TRUE(is_ok(store_->write_chunks(shard_, Epoch{1}, test::chunk_writes(b))));
  std::vector<PageItem> page = {{a.identity.id, uniform_advances(seq_of(1, 25), seq_of(1, 30))},
                                {b.identity.id, uniform_advances(seq_of(1, 29), seq_of(1, 31))}};
  EXPECT_TRUE(fails_with(store_->finish_dispatch_page(shard_, Epoch{1}, page), Errc::kWatermarkGap));
  auto stored = raw("SELECT log_offset FROM " + table("mailbox_entry") + " WHERE user_id = ?",
                    cql::Values().text(u.str()));
  ASSERT_TRUE(is_ok(stored));
  EXPECT_EQ(stored->size(), 3u);  // 25, 30 and 31 are all written

  auto reader = fresh_store();
  ASSERT_TRUE(is_ok(reader));
  EXPECT_EQ(*test::frontier_of(**reader, shard_, Epoch{1}), seq_of(1, 25));
  auto visible = test::read_all(**reader, u);
  ASSERT_TRUE(is_ok(visible));
  EXPECT_EQ(seqs_of(*visible), std::vector<MailboxSeq>{seq_of(1, 25)});
}

TEST_F(ScyllaGate, FrontierWritetimeIsItsOffset) {
  ASSERT_TRUE(is_ok(materialise(record(300), 4242, {})));
  auto rows = raw("SELECT frontier_offset, WRITETIME(frontier_offset) FROM " +
                      table("mailbox_shard_frontier") + " WHERE shard = ? AND epoch = 1",
                  cql::Values().int32(shard_value()));
  ASSERT_TRUE(is_ok(rows));
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(*(*rows)[0].get_i64(0), 4242);
  EXPECT_EQ(*(*rows)[0].get_i64(1), 4242);
}

TEST_F(ScyllaGate, IdentityWritetimeIsFirstWriterTimestampWithTtl) {
  auto r = record(301);
  ASSERT_TRUE(is_ok(materialise(r, 777, {})));
  auto rows = raw("SELECT WRITETIME(canonical_offset), TTL(canonical_offset), WRITETIME(digest) FROM " +
                      table("mailbox_dispatch") + " WHERE shard = ? AND epoch = 1 AND dispatch_id = ?",
                  cql::Values().int32(shard_value()).text(r.identity.id.str()));
  ASSERT_TRUE(is_ok(rows));
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(*(*rows)[0].get_i64(0), static_cast<int64_t>(kMaxOffset - 777));
  EXPECT_EQ(*(*rows)[0].get_i64(2), static_cast<int64_t>(kMaxOffset - 777));
  const int32_t ttl = *(*rows)[0].get_i32(1);
  EXPECT_LE(ttl, kDispatchIdentityTtlSeconds);
  EXPECT_GT(ttl, kDispatchIdentityTtlSeconds - 600);
}

TEST_F(ScyllaGate, SameIdWithAnotherDigestIsDispatchConflict) {
  auto r = record(302);
  ASSERT_TRUE(is_ok(materialise(r, 40, {})));
  auto other = r;
  other.identity.digest ^= 1;
  EXPECT_TRUE(fails_with(store_->begin_dispatch(shard_, Epoch{1}, other.identity, Offset{41}),
                         Errc::kDispatchConflict));
}

// A stale writer's late writes carry lower timestamps than what is stored and change nothing a fresh
// reader sees: not the frontier (stored 100, late 80), not the entries below it, not the identity.
TEST_F(ScyllaGate, LateLowerTimestampWriteMovesNothingBack) {
  const UserId u = user(0);
  ASSERT_TRUE(is_ok(materialise(record(303), 60, {})));
  auto r = record(304);
  ASSERT_TRUE(is_ok(materialise(r, 100, seq_of(1, 60))));
  // The late frontier write at offset 80 (timestamp 80) loses to the stored 100 (timestamp 100).
  ASSERT_TRUE(is_ok(raw("UPDATE " + table("mailbox_shard_frontier") +
                            " USING TIMESTAMP 80 SET frontier_offset = 80 WHERE shard = ? AND epoch = 1",
                        cql::Values().int32(shard_value()))));
  // A late identity observation at a later offset (lower timestamp) does not replace the first.
  ASSERT_TRUE(
      is_ok(raw("INSERT INTO " + table("mailbox_dispatch") +
                    " (shard, epoch, dispatch_id, digest, manifest, canonical_offset) VALUES (?, 1, ?, 0, "
                    "0x00, 999) USING TIMESTAMP " +
                    std::to_string(kMaxOffset - 999),
                cql::Values().int32(shard_value()).text(r.identity.id.str()))));

  auto reader = fresh_store();
  ASSERT_TRUE(is_ok(reader));
  EXPECT_EQ(*test::frontier_of(**reader, shard_, Epoch{1}), seq_of(1, 100));
  auto visible = test::read_all(**reader, u);
  ASSERT_TRUE(is_ok(visible));
  EXPECT_EQ(seqs_of(*visible), (std::vector<MailboxSeq>{seq_of(1, 60), seq_of(1, 100)}));
  auto progress = (*reader)->dispatch_progress(shard_, Epoch{1}, r.identity.id);
  ASSERT_TRUE(is_ok(progress));
  EXPECT_EQ(progress->canonical_offset, Offset{100});
  EXPECT_EQ(progress->completed_chunks, std::vector<uint32_t>{0});  // covered by the frontier
}

TEST_F(ScyllaGate, WallClockTimestampedFrontierReadsAsCorruptEntry) {
  ASSERT_TRUE(is_ok(raw(
      "UPDATE " + table("mailbox_shard_frontier") + " SET frontier_offset = 7 WHERE shard = ? AND epoch = 1",
      cql::Values().int32(shard_value()))));
  EXPECT_TRUE(fails_with(store_->lane_watermarks(shard_, Epoch{1}), Errc::kCorruptEntry));
  EXPECT_TRUE(fails_with(store_->read_mailbox(MailboxQuery{user(0), {}, 10}), Errc::kCorruptEntry));
}

TEST_F(ScyllaGate, HigherEpochFrontierIsRefused) {
  ASSERT_TRUE(is_ok(raw("UPDATE " + table("mailbox_shard_frontier") +
                            " USING TIMESTAMP 9 SET frontier_offset = 9 WHERE shard = ? AND epoch = 4",
                        cql::Values().int32(shard_value()))));
  EXPECT_TRUE(fails_with(store_->lane_watermarks(shard_, Epoch{3}), Errc::kEpochAhead));
  EXPECT_TRUE(fails_with(store_->begin_dispatch(shard_, Epoch{3}, record(305).identity, Offset{10}),
                         Errc::kEpochAhead));
  EXPECT_EQ(*test::frontier_of(*store_, shard_, Epoch{4}), seq_of(4, 9));
}

TEST_F(ScyllaGate, RepeatedObservationReusesCanonicalSequenceWithoutRewrite) {
  auto r = record(306);
  ASSERT_TRUE(is_ok(materialise(r, 60, {})));
  const OpCounts before = store_->op_counts();
  auto begun = store_->begin_dispatch(shard_, Epoch{1}, r.identity, Offset{65});
  ASSERT_TRUE(is_ok(begun));
  EXPECT_EQ(begun->kind, BeginKind::kExisting);
  EXPECT_EQ(begun->seq, seq_of(1, 60));
  EXPECT_FALSE(begun->needs_entries);
  EXPECT_EQ((store_->op_counts() - before).inserts, 0u);
  auto entries = test::read_all(*store_, user(0));
  ASSERT_TRUE(is_ok(entries));
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].seq, seq_of(1, 60));
}

TEST_F(ScyllaGate, GcAlwaysReturnsZero) {
  ASSERT_TRUE(is_ok(materialise(record(307), 70, {})));
  auto gc = store_->gc_completed_dispatches();
  ASSERT_TRUE(is_ok(gc));
  EXPECT_EQ(*gc, 0u);
}

// ADR-0022 section 3: identity rows live 31 days and a replay older than that is materialised again. The
// first observation (offset 400) is written as the store writes it, but with a TTL of 3 s, and its
// expiry awaited. (Not 1 s: the server stamps expiry as whole seconds, now_in_sec + TTL, so a TTL of 1 s
// lives anywhere from 0 to 1 s, and on a three-node ring the quorum read that checks the row was written
// came back after it had already expired.) A replay then begins Fresh at its own offset, and because the
// expired cell keeps its timestamp 2^48-1-400 until it is purged (gc_grace_seconds after expiry), it also
// shadows the replay's claim (timestamp 2^48-1-450 is lower): the next replay, by a fresh store, is Fresh
// again, and the message is shown once per replay. This is why the Outbox retention must keep replays inside
// the TTL.
TEST_F(ScyllaGate, ExpiredIdentityIsFreshAgainAndShadowsLaterClaims) {
  const UserId u = user(0);
  ASSERT_TRUE(is_ok(materialise(record(900), 390, {})));
  auto r = record(901);
  const cql::Values key = cql::Values().int32(shard_value()).text(r.identity.id.str());
  ASSERT_TRUE(
      is_ok(raw("INSERT INTO " + table("mailbox_dispatch") +
                    " (shard, epoch, dispatch_id, digest, manifest, canonical_offset) VALUES (?, 1, ?, "
                    "?, ?, 400) USING TIMESTAMP " +
                    std::to_string(kMaxOffset - 400) + " AND TTL 3",
                cql::Values()
                    .int32(shard_value())
                    .text(r.identity.id.str())
                    .bigint(static_cast<int64_t>(r.identity.digest))
                    .blob(encode_manifest(r.identity.manifest)))));
  const std::string select = "SELECT canonical_offset, WRITETIME(canonical_offset) FROM " +
                             table("mailbox_dispatch") + " WHERE shard = ? AND epoch = 1 AND dispatch_id = ?";
  auto first = raw(select, key);
  ASSERT_TRUE(is_ok(first));
  ASSERT_EQ(first->size(), 1u);  // it was there
  // The server's TTL counts real time: await the expiry (a condition, not a duration).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    auto rows = raw(select, key);
    ASSERT_TRUE(is_ok(rows));
    if (rows->empty()) break;
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the identity row did not expire";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }

  // A replay at 450, by a store that never saw offset 400: Fresh, canonical 450, entries written again.
  auto replay = fresh_store();
  ASSERT_TRUE(is_ok(replay));
  auto begun = (*replay)->begin_dispatch(shard_, Epoch{1}, r.identity, Offset{450});
  ASSERT_TRUE(is_ok(begun));
  EXPECT_EQ(begun->kind, BeginKind::kFresh);
  EXPECT_EQ(begun->seq, seq_of(1, 450));
  EXPECT_TRUE(begun->needs_entries);
  ASSERT_TRUE(is_ok(test::materialise(**replay, shard_, Epoch{1}, r, Offset{450}, seq_of(1, 390))));
  // Its claim was written, and is shadowed by the expired cell: nothing reads back.
  auto after_claim = raw(select, key);
  ASSERT_TRUE(is_ok(after_claim));
  EXPECT_TRUE(after_claim->empty());

  // So the next replay (another restart) is Fresh too, and the reader is shown the message twice.
  auto again_store = fresh_store();
  ASSERT_TRUE(is_ok(again_store));
  auto again = (*again_store)->begin_dispatch(shard_, Epoch{1}, r.identity, Offset{460});
  ASSERT_TRUE(is_ok(again));
  EXPECT_EQ(again->kind, BeginKind::kFresh);
  EXPECT_EQ(again->seq, seq_of(1, 460));
  ASSERT_TRUE(is_ok(test::materialise(**again_store, shard_, Epoch{1}, r, Offset{460}, seq_of(1, 450))));
  auto reader = fresh_store();
  ASSERT_TRUE(is_ok(reader));
  auto visible = test::read_all(**reader, u);
  ASSERT_TRUE(is_ok(visible));
  EXPECT_EQ(seqs_of(*visible), (std::vector<MailboxSeq>{seq_of(1, 390), seq_of(1, 450), seq_of(1, 460)}));
  for (size_t i = 1; i < visible->size(); ++i) EXPECT_EQ((*visible)[i].message.id, r.message.id);
}

// Which node a cluster test stops: node 3 of the ring at QIM_TEST_CQL_HOSTS (its third host). The engine
// script is told that address prefix, so a ring moved with QIM_CASSANDRA_ADDRESS_PREFIX (and its JMX port
// with QIM_CASSANDRA_JMX_PORT, and QIM_RUN_DIR, both inherited) is the one acted on, never another.
struct RingNode {
  std::string host;    // e.g. 127.0.1.3
  std::string prefix;  // e.g. 127.0.1.
};

std::optional<RingNode> third_node() {
  const auto hosts = cql::split_hosts(*gate_env("QIM_TEST_CQL_HOSTS"));
  if (hosts.size() != 3 || !hosts[2].ends_with(".3")) return std::nullopt;
  return RingNode{hosts[2], hosts[2].substr(0, hosts[2].size() - 1)};
}

// True if something accepts TCP connections on host:9042 (the node serves CQL).
bool serves_cql(const std::string& host) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(9042);
  const bool ok = ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) == 1 &&
                  ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

int engine(const RingNode& node, const std::string& args) {
  const std::string script = std::string(QIM_SOURCE_DIR) + "/scripts/engines/cassandra.sh";
  return std::system(
      ("QIM_CASSANDRA_ADDRESS_PREFIX=" + node.prefix + " bash " + script + " " + args + " >/dev/null")
          .c_str());
}

// Node 3 stopped for one test: brought back (start-node, then wait-node: the ring shows 3 UN again) by
// bring_back() or, should an assertion end the test first, by the destructor.
class StoppedNode {
 public:
  explicit StoppedNode(RingNode node) : node_(std::move(node)), stop_rc_(engine(node_, "stop-node 3")) {}
  StoppedNode(const StoppedNode&) = delete;
  StoppedNode& operator=(const StoppedNode&) = delete;
  ~StoppedNode() { (void)bring_back(); }
  int stop_rc() const { return stop_rc_; }
  // 0 once the node serves again and the ring shows 3 UN; the script's exit code otherwise.
  int bring_back() {
    if (back_) return back_rc_;
    back_ = true;
    back_rc_ = engine(node_, "start-node 3");
    if (back_rc_ == 0) back_rc_ = engine(node_, "wait-node 3");
    return back_rc_;
  }

 private:
  RingNode node_;
  int stop_rc_;
  bool back_ = false;
  int back_rc_ = 0;
};

// A page of 8 records over a non-zero frontier (199); node 3 stops after the 4th. While the page is open a
// fresh reader sees exactly what the frontier covers (the entry at 199, none of the page's); QUORUM writes
// go on with two nodes of three; the finish moves the frontier to 207 and a fresh reader sees all 9.
TEST_F(ScyllaGate, OneNodeOfThreeStoppedMidPageKeepsQuorumWritesWorking) {
  if (!gate_cluster_mode()) GTEST_SKIP() << "needs the three-node cluster (QIM_TEST_CQL_CLUSTER=1)";
  const auto node = third_node();
  ASSERT_TRUE(node) << "QIM_TEST_CQL_CLUSTER=1 needs QIM_TEST_CQL_HOSTS=P1,P2,P3 (the ring of "
                       "scripts/engines/cassandra.sh, node N on PN)";
  ASSERT_TRUE(serves_cql(node->host)) << node->host << " does not serve CQL before the test";
  const UserId u = user(0);
  ASSERT_TRUE(is_ok(materialise(record(699), 199, {})));
  std::vector<DispatchRecord> records;
  std::vector<PageItem> page;
  MailboxSeq prev = seq_of(1, 199);
  std::optional<StoppedNode> stopped;
  for (int i = 0; i < 8; ++i) {
    records.push_back(record(700 + i));
    const uint64_t offset = 200 + i;
    ASSERT_TRUE(is_ok(store_->begin_dispatch(shard_, Epoch{1}, records.back().identity, Offset{offset})));
    if (i == 4) {
      stopped.emplace(*node);
      ASSERT_EQ(stopped->stop_rc(), 0);
      ASSERT_FALSE(serves_cql(node->host)) << "stop-node 3 left " << node->host << " serving";
    }
    ASSERT_TRUE(is_ok(store_->write_chunks(shard_, Epoch{1}, test::chunk_writes(records.back()))));
    page.push_back(PageItem{records.back().identity.id, uniform_advances(prev, seq_of(1, offset))});
    prev = seq_of(1, offset);
    // While the page is open a fresh reader sees what the frontier covers, nothing of the page.
    auto reader = fresh_store();
    ASSERT_TRUE(is_ok(reader));
    auto visible = (*reader)->read_mailbox(MailboxQuery{u, {}, 100});
    ASSERT_TRUE(is_ok(visible));
    EXPECT_EQ(visible->frontier, seq_of(1, 199));
    EXPECT_EQ(seqs_of(visible->entries), std::vector<MailboxSeq>{seq_of(1, 199)});
  }
  auto out = store_->finish_dispatch_page(shard_, Epoch{1}, page);
  auto reader = fresh_store();
  ASSERT_TRUE(stopped);
  EXPECT_EQ(stopped->bring_back(), 0) << "node 3 did not come back";
  ASSERT_TRUE(is_ok(out));
  EXPECT_EQ(out->frontier, seq_of(1, 207));
  ASSERT_TRUE(is_ok(reader));
  EXPECT_EQ(*test::frontier_of(**reader, shard_, Epoch{1}), seq_of(1, 207));
  auto visible = test::read_all(**reader, u);
  ASSERT_TRUE(is_ok(visible));
  ASSERT_EQ(visible->size(), 9u);
  EXPECT_EQ(visible->front().seq, seq_of(1, 199));
  EXPECT_EQ(visible->back().seq, seq_of(1, 207));
}

}  // namespace
}  // namespace qim
