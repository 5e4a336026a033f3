// `qim admin audit dispatch` against a real store (the backend this binary was built for, see
// audit_target.h): state written by two owners at two epochs through the store contract, then audited by
// a fresh reader (open_audit_reader, as the CLI does) and by the qim binary itself.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

#include "fanout/dispatch_plan.h"
#include "mailbox/open_audit_reader.h"
#include "mailbox/redis/packed_watermarks.h"
#include "mailbox/redis/redis_keys.h"
#include "mailbox/redis/redis_test_env.h"
#include "mailbox/redis/redis_values.h"
#include "mailbox/tests/contract_helpers.h"
#include "ops/audit_target.h"
#include "ops/dispatch_audit.h"

namespace qim::test {
namespace {

constexpr uint32_t kShards = 4;
const ShardMap kMap = *ShardMap::create(kShards);

class AuditDispatch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = ops_unavailable()) GTEST_SKIP() << *why;
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    // The schema test alters a table and starts from a keyspace that does not exist: a keyspace of its own.
    auto target = make_audit_target(name, kShards,
                                    name == "SchemaCheckRefusesTwcs" ? Keyspace::kOwn : Keyspace::kShared);
    ASSERT_TRUE(target.ok()) << target.error().to_string();
    target_ = std::move(*target);
    a0_ = user_in_shard(kMap, ShardId{0}, 0);
    a1_ = user_in_shard(kMap, ShardId{0}, 1);
    b0_ = user_in_shard(kMap, ShardId{1}, 0);
  }

  // A record as fanout names it: "m<message>-s<shard>".
  DispatchRecord record(uint64_t message, uint32_t shard, std::vector<UserId> to,
                        const std::string& body = "") {
    Message m = make_message(message, a0_, server_time_ms_);
    if (!body.empty()) m.body = body;
    return make_record(dispatch_id_for(MessageId{message}, ShardId{shard}).str(), m, {std::move(to)});
  }

  // One owner's store at `epoch`, materialising records at their offsets, then closed.
  void own(uint32_t epoch, const std::vector<std::pair<DispatchRecord, uint64_t>>& records) {
    auto store = open_mailbox_store(target_->options());
    ASSERT_TRUE(store.ok()) << store.error().to_string();
    for (const auto& [r, offset] : records) {
      const ShardId shard = kMap.shard_of(r.chunks[0][0]);
      auto previous = frontier_of(**store, shard, Epoch{epoch});
      ASSERT_TRUE(previous.ok()) << previous.error().to_string();
      auto done = materialise(**store, shard, Epoch{epoch}, r, Offset{offset}, *previous);
      ASSERT_TRUE(done.ok()) << r.identity.id.str() << ": " << done.error().to_string();
    }
  }

  // Epoch 1 owns shards 0 and 1; epoch 2 takes shard 0 over and sees m1 and m2 again from the log
  // (m2 with `m2_body_at_2`), then m4.
  void two_owners(const std::string& m2_body_at_2) {
    own(1, {{record(1, 0, {a0_, a1_}), 10}, {record(2, 0, {a0_}), 11}, {record(3, 1, {b0_}), 5}});
    own(2,
        {{record(1, 0, {a0_, a1_}), 10}, {record(2, 0, {a0_}, m2_body_at_2), 11}, {record(4, 0, {a1_}), 12}});
  }

  AuditReport audit(std::vector<ShardId> shards = {}) {
    auto reader = open_audit_reader(target_->options());
    EXPECT_TRUE(reader.ok()) << reader.error().to_string();
    if (!reader.ok()) return {};
    auto report = audit_dispatch(**reader, AuditRequest{kMap, std::move(shards), 100'000, {}});
    EXPECT_TRUE(report.ok()) << report.error().to_string();
    return report.ok() ? *report : AuditReport{};
  }

  std::unique_ptr<AuditTarget> target_;
  UserId a0_, a1_, b0_;
  int64_t server_time_ms_ = 1'700'000'000'000;
};

// One suite name per backend binary (OpsAudit_embedded, OpsAudit_redis, OpsAudit_scylla): ctest names
// must be unique across the three binaries, and each keeps its own label.
#define QIM_OPS_CAT2(a, b) a##b
#define QIM_OPS_CAT(a, b) QIM_OPS_CAT2(a, b)
#define OPS_FIXTURE QIM_OPS_CAT(OpsAudit_, QIM_OPS_TEST_BACKEND_ID)
class OPS_FIXTURE : public AuditDispatch {};

TEST_F(OPS_FIXTURE, CleanTwoEpochsHaveNoFindings) {
  two_owners("");  // the same payload at both epochs: a replay, not a conflict
  const AuditReport report = audit();
  EXPECT_TRUE(report.findings.empty()) << render_audit_table(report);
  EXPECT_EQ(report.backend, ops_backend());
  EXPECT_EQ(report.counts.frontier_rows, 3u);  // (0,1) (1,1) (0,2)
  EXPECT_EQ(report.counts.identity_rows, 6u);  // m1 m2 m3 at epoch 1, m1 m2 m4 at epoch 2
  EXPECT_EQ(report.counts.entry_rows, 8u);     // 2+1+1 and 2+1+1
  EXPECT_EQ(report.counts.entries_without_identity, 0u);
  EXPECT_EQ(report.counts.entries_above_frontier, 0u);

  const QimRun run = run_qim(target_->env(), "admin audit dispatch --all --json");
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("\"clean\":true"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("\"identity_rows\":6"), std::string::npos) << run.output;

  // frontier show: the three rows, their WRITETIME check, and who owns the shard (nobody leased it here).
  const QimRun frontier = run_qim(target_->env(), "admin frontier show --json");
  EXPECT_EQ(frontier.code, 0) << frontier.output;
  EXPECT_NE(frontier.output.find("\"shard\":0,\"epoch\":2,\"offset\":12,\"mailbox_seq\":\"2:12\""),
            std::string::npos)
      << frontier.output;
  EXPECT_NE(frontier.output.find("\"shard\":1,\"epoch\":1,\"offset\":5"), std::string::npos)
      << frontier.output;
  const std::string owner = ops_backend() == "embedded" ? "\"owner\":\"-\"" : "\"owner\":\"(never leased)\"";
  EXPECT_NE(frontier.output.find(owner), std::string::npos) << frontier.output;
  if (ops_backend() == "scylla") {
    EXPECT_NE(frontier.output.find("\"writetime\":12"), std::string::npos) << frontier.output;
  }
}

TEST_F(OPS_FIXTURE, FindsExactlyTheConflictingPayload) {
  two_owners("another body at epoch 2");
  const AuditReport report = audit();
  ASSERT_EQ(report.findings.size(), 1u) << render_audit_table(report);
  const AuditFinding& f = report.findings[0];
  EXPECT_EQ(f.kind, AuditFindingKind::kIdentityConflict);
  EXPECT_EQ(f.dispatch_id, "m2-s0");
  EXPECT_EQ(f.shard->value, 0u);
  EXPECT_EQ(f.epoch->value, 2u);

  const QimRun table = run_qim(target_->env(), "admin audit dispatch --all");
  std::cout << table.output;  // a real audit's output in the test log (docs/operations.md shows one)
  EXPECT_EQ(table.code, 3) << table.output;
  EXPECT_NE(table.output.find("identity_conflict"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("m2-s0"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("1 inconsistencies"), std::string::npos) << table.output;
  // The conflict is on shard 0: shard 1 alone is clean.
  const QimRun shard1 = run_qim(target_->env(), "admin audit dispatch --shard 1 --json --rate 50");
  EXPECT_EQ(shard1.code, 0) << shard1.output;
  EXPECT_NE(shard1.output.find("\"identity_rows\":1,"), std::string::npos) << shard1.output;
  // dispatch show names both epochs and their digests.
  const QimRun show = run_qim(target_->env(), "admin dispatch show m2-s0");
  EXPECT_EQ(show.code, 0) << show.output;
  const auto digest = [&](uint32_t epoch) {
    auto reader = open_audit_reader(target_->options());
    auto row = (*reader)->identity(ShardId{0}, Epoch{epoch}, *DispatchId::parse("m2-s0"));
    return row.ok() && *row ? fmt::format("{:016x}", (*row)->digest) : std::string("none");
  };
  EXPECT_NE(digest(1), digest(2));
  EXPECT_NE(show.output.find(digest(1)), std::string::npos) << show.output;
  EXPECT_NE(show.output.find(digest(2)), std::string::npos) << show.output;
}

// What the store never writes, injected by hand: each is found, and nothing else.
TEST_F(OPS_FIXTURE, FindsEngineMetadataAndEntryMismatches) {
  if (ops_backend() == "embedded") GTEST_SKIP() << "embedded rows have no engine metadata to corrupt by hand";
  two_owners("");
  const std::string space = target_->space();
  if (ops_backend() == "scylla") {
    // A frontier cell rewritten with a timestamp that is not its offset.
    ASSERT_TRUE(target_
                    ->raw_cql("UPDATE " + space +
                              ".mailbox_shard_frontier USING TIMESTAMP 7 SET "
                              "frontier_offset = 5 WHERE shard = 1 AND epoch = 1")
                    .ok());
    // An identity row written without a TTL (with the right timestamp).
    ASSERT_TRUE(target_
                    ->raw_cql("INSERT INTO " + space +
                              ".mailbox_dispatch (shard, epoch, dispatch_id, digest, "
                              "manifest, canonical_offset) VALUES (1, 1, 'm9-s1', 1, 0x" +
                              [] {
                                std::string hex;
                                for (unsigned char c : encode_manifest(Manifest{{1}}))
                                  hex += fmt::format("{:02x}", c);
                                return hex;
                              }() +
                              ", 6) USING TIMESTAMP " + std::to_string(kMaxOffset - 6))
                    .ok());
    // An entry of m3 at an offset that is not m3's canonical one (5).
    ASSERT_TRUE(
        target_
            ->raw_cql("INSERT INTO " + space +
                      ".mailbox_entry (user_id, epoch, log_offset, message_id, "
                      "conversation, sender, sender_device, client_msg_id, server_time_ms, body) VALUES ('" +
                      b0_.str() + "', 1, 4, 3, 'c', 's', 'd', 'x', 0, 0x00)")
            .ok());
  } else {
    RedisKeys keys(space);
    // A packed watermark whose lanes differ.
    auto packed = target_->raw_redis_get(1, keys.frontier(ShardId{1}));
    ASSERT_TRUE(packed.ok()) << packed.error().to_string();
    std::string bent = *packed;
    bent[8 * 3] = static_cast<char>(bent[8 * 3] + 1);
    ASSERT_TRUE(target_->raw_redis(1, {"SET", keys.frontier(ShardId{1}), bent}).ok());
    // An identity that lost its TTL.
    ASSERT_TRUE(
        target_->raw_redis(1, {"PERSIST", keys.identity(ShardId{1}, Epoch{1}, *DispatchId::parse("m3-s1"))})
            .ok());
    // An entry of m1 at an offset that is not m1's canonical one (10).
    Message m = make_message(1, a0_, 1'700'000'000'000);
    ASSERT_TRUE(target_
                    ->raw_redis(0, {"HSET", keys.values(a1_), seq_hex(seq_of(1, 9)),
                                    encode_entry_value(m, 4'000'000'000'000)})
                    .ok());
  }
  const AuditReport report = audit();
  std::vector<std::string> kinds;
  for (const auto& f : report.findings) kinds.emplace_back(audit_finding_name(f.kind));
  if (ops_backend() == "scylla") {
    EXPECT_EQ(kinds, (std::vector<std::string>{"entry_seq_mismatch", "identity_ttl", "frontier_writetime"}))
        << render_audit_table(report);
  } else {
    EXPECT_EQ(kinds, (std::vector<std::string>{"entry_seq_mismatch", "identity_ttl", "corrupt_row"}))
        << render_audit_table(report);
  }
  const QimRun frontier = run_qim(target_->env(), "admin frontier show --shard 1");
  EXPECT_EQ(frontier.code, 3) << frontier.output;
}

TEST_F(OPS_FIXTURE, MailboxReadShowsWhatAClientSees) {
  two_owners("");
  const QimRun all = run_qim(target_->env(), "admin mailbox read " + a0_.str());
  EXPECT_EQ(all.code, 0) << all.output;
  EXPECT_NE(all.output.find("4 entries"), std::string::npos) << all.output;  // m1 m2 at 1 and again at 2
  const QimRun after = run_qim(target_->env(), "admin mailbox read " + a0_.str() + " --after 2:10 --json");
  EXPECT_EQ(after.code, 0) << after.output;
  EXPECT_NE(after.output.find("\"seq\":\"2:11\""), std::string::npos) << after.output;
  EXPECT_EQ(after.output.find("\"seq\":\"2:10\""), std::string::npos) << after.output;
}

// The CLI's refusals: bad arguments (exit 2), unknown shards (2), a store that is not there (1).
TEST_F(OPS_FIXTURE, RefusesBadArgumentsAndUnknownShards) {
  const auto env = target_->env();
  QimRun r = run_qim(env, "admin audit dispatch");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--shard N"), std::string::npos) << r.output;
  r = run_qim(env, "admin audit dispatch --shard 4");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown shard"), std::string::npos) << r.output;
  r = run_qim(env, "admin audit dispatch --all --rate 0");
  EXPECT_NE(r.code, 0) << r.output;
  r = run_qim(env, "admin mailbox read 'no spaces'");
  EXPECT_EQ(r.code, 2) << r.output;
  r = run_qim(env, "admin mailbox read u1 --after 1:x");
  EXPECT_EQ(r.code, 2) << r.output;
  r = run_qim(env, "admin dispatch show not-a-fanout-id");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--shard"), std::string::npos) << r.output;
  for (const char* help : {"admin --help", "admin audit dispatch --help", "admin frontier show --help",
                           "admin mailbox read --help", "admin dispatch show --help"}) {
    r = run_qim(env, help);
    EXPECT_EQ(r.code, 0) << help << ": " << r.output;
  }
}

TEST_F(OPS_FIXTURE, UnreachableEngineIsAClearError) {
  auto env = target_->env();
  std::string expected;
  if (ops_backend() == "embedded") {
    env["QIM_DATA_DIR"] = target_->space() + "/nothing-here";
    expected = "no embedded mailbox store";
  } else if (ops_backend() == "redis") {
    env["QIM_MAILBOX_REDIS"] = "127.0.0.1:" + std::to_string(unused_loopback_port());
    expected = "cannot connect";
  } else {
    env["QIM_CQL_HOSTS"] = "127.0.0.1:" + std::to_string(unused_loopback_port());
    expected = "QIM_CQL_HOSTS";
  }
  const QimRun r = run_qim(env, "admin audit dispatch --all");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find(expected), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(target_->space() + "/nothing-here"));
}

}  // namespace
}  // namespace qim::test

namespace qim::test {
namespace {

// schema check/apply: a keyspace apply created keeps every rule; one table switched to TWCS is a
// problem check names and apply refuses to paper over. Elsewhere: nothing to check, said so.
TEST_F(OPS_FIXTURE, SchemaCheckRefusesTwcs) {
  const auto env = target_->env();
  if (ops_backend() != "scylla") {
    const QimRun r = run_qim(env, "admin schema check");
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("keeps no schema"), std::string::npos) << r.output;
    return;
  }
  QimRun r = run_qim(env, "admin schema check");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;
  r = run_qim(env, "admin schema apply");
  EXPECT_EQ(r.code, 0) << r.output;
  r = run_qim(env, "admin schema check");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("tablets: not applicable"), std::string::npos) << r.output;  // Cassandra
  ASSERT_TRUE(target_
                  ->raw_cql("ALTER TABLE " + target_->space() +
                            ".mailbox_entry WITH compaction = {'class': 'TimeWindowCompactionStrategy'}")
                  .ok());
  r = run_qim(env, "admin schema check");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("mailbox_entry uses TimeWindowCompactionStrategy"), std::string::npos) << r.output;
  r = run_qim(env, "admin schema apply");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("nothing applied"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace qim::test

namespace qim::test {
namespace {

// retention sweep: messages sent today, swept with the clock 40 days ahead (QIM_TEST_CLOCK_OFFSET_MS, as
// the e2e suite does): every trim moves past them, a reader is shown nothing, a second sweep has nothing
// left to do.
TEST_F(OPS_FIXTURE, RetentionSweepReportsWhatMoved) {
  server_time_ms_ = SystemClock().now_ms();
  two_owners("");
  auto env = target_->env();
  env["QIM_TEST_CLOCK_OFFSET_MS"] = std::to_string(40 * kDayMs);
  QimRun r = run_qim(env, "admin retention sweep --all");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("3 users swept, 3 trims moved, 0 failed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(a0_.str() + ": trim 0:0 -> 2:11, 1 day buckets expired"), std::string::npos)
      << r.output;
  r = run_qim(env, "admin retention sweep " + a0_.str());
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("nothing to sweep (trim 2:11)"), std::string::npos) << r.output;
  r = run_qim(env, "admin mailbox read " + a0_.str());
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("0 entries after 0:0"), std::string::npos) << r.output;
  r = run_qim(env, "admin retention sweep");
  EXPECT_EQ(r.code, 2) << r.output;
}

}  // namespace
}  // namespace qim::test

namespace qim::test {
namespace {

// The embedded reader opens RocksDB read-only: it audits a store another process holds open (the lock is
// the writer's), seeing what was written when it opened.
TEST_F(OPS_FIXTURE, AuditsAStoreThatIsOpenElsewhere) {
  if (ops_backend() != "embedded") GTEST_SKIP() << "the other backends are servers: always open elsewhere";
  two_owners("another body at epoch 2");
  auto writer = open_mailbox_store(target_->options());
  ASSERT_TRUE(writer.ok()) << writer.error().to_string();
  const QimRun r = run_qim(target_->env(), "admin audit dispatch --all --json");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("\"dispatch_id\":\"m2-s0\""), std::string::npos) << r.output;
}

// Issue 36, item 1: a shard with more recipients than one record holds gets further records "-p1", ...
// (fanout/dispatch_plan.h). Each part's entries are at its own canonical offset: the audit matches them to
// their part, not to the first record (a false "entry seq mismatch" before), and `admin dispatch show`
// finds the part's shard in its id.
TEST_F(OPS_FIXTURE, TheRecordsOfOneShardCutInPartsAuditClean) {
  const Message m = make_message(5, a0_, server_time_ms_);
  const DispatchRecord first = make_record(dispatch_id_for(MessageId{5}, ShardId{0}).str(), m, {{a0_}});
  const DispatchRecord second = make_record(dispatch_id_for(MessageId{5}, ShardId{0}, 1).str(), m, {{a1_}});
  own(1, {{first, 10}, {second, 11}});
  const AuditReport report = audit();
  EXPECT_TRUE(report.findings.empty()) << render_audit_table(report);
  EXPECT_EQ(report.counts.identity_rows, 2u);
  EXPECT_EQ(report.counts.entry_rows, 2u);
  EXPECT_EQ(report.counts.entries_without_identity, 0u);
  const QimRun shown = run_qim(target_->env(), "admin dispatch show m5-s0-p1 --json");
  EXPECT_EQ(shown.code, 0) << shown.output;
  EXPECT_NE(shown.output.find("m5-s0-p1"), std::string::npos) << shown.output;
}

}  // namespace
}  // namespace qim::test
