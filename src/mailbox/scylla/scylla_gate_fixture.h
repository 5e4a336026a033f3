#pragma once
// The fixture of the CQL contract gate of ADR-0022 ("Acceptance"; scylla_gate_test.cc,
// scylla_gate_retention_test.cc), against a real Cassandra/ScyllaDB cluster at QIM_TEST_CQL_HOSTS.
// Unset: every case is skipped, saying so. Set but unreachable: every case FAILS (a gate that skips
// because its engine is down would pass while checking nothing). With QIM_TEST_CQL_CLUSTER=1 the keyspace
// has RF 3 and one case stops a node mid-page. Each test works on its own shard of one keyspace made for
// this run; assertions on what a reader sees go through fresh_store(), never the writer's cache.
//
// ctest runs every case in a process of its own. Making the keyspace's schema costs seconds (most of a
// case's time on three nodes), so the processes of one ctest run share it: the keyspace is named after
// the parent process (ctest, or the shell that runs the binary by hand) and each case claims a shard of
// its own in it with a lightweight transaction, so no two cases, in one process or in several, ever
// write the same shard. The keyspace is not dropped (no case knows it is the last one); a test run's
// engines are thrown away with the run.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "mailbox/contract_store.h"
#include "mailbox/scylla/scylla_backend.h"
#include "mailbox/scylla/write_timestamps.h"
#include "mailbox/tests/contract_helpers.h"

namespace qim {

inline constexpr uint32_t kGateShards = 256;
inline constexpr int64_t kGateNoon = 20'000 * kDayMs + kDayMs / 2;

inline std::optional<std::string> gate_env(const char* name) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before threads start
  return v && *v ? std::optional<std::string>(v) : std::nullopt;
}

inline bool gate_cluster_mode() {
  return gate_env("QIM_TEST_CQL_CLUSTER") == "1";
}

class ScyllaGate : public ::testing::Test {
 protected:
  // A failure here would make gtest mark every case "skipped" (a fatal failure in SetUpTestSuite skips
  // the suite), which the test command could not tell from "no engine configured": the error is kept
  // and every case fails on it in SetUp instead.
  static void SetUpTestSuite() {
    if (!gate_env("QIM_TEST_CQL_HOSTS")) return;
    keyspace_ =
        std::string("qim_gate_") + (gate_cluster_mode() ? "rf3_" : "rf1_") + std::to_string(::getppid());
    auto s = cql::Session::connect({.hosts = cql::split_hosts(*gate_env("QIM_TEST_CQL_HOSTS"))});
    if (!s.ok()) {
      connect_error_ = s.error().to_string();
      return;
    }
    raw_ = new cql::Session(std::move(s).value());
  }
  static void TearDownTestSuite() {
    delete raw_;  // the keyspace stays: the other processes of this run use it (see the top)
    raw_ = nullptr;
  }

  void SetUp() override {
    if (!gate_env("QIM_TEST_CQL_HOSTS"))
      GTEST_SKIP() << "QIM_TEST_CQL_HOSTS is unset: no CQL cluster to test against";
    ASSERT_NE(raw_, nullptr) << "QIM_TEST_CQL_HOSTS=" << *gate_env("QIM_TEST_CQL_HOSTS")
                             << " is set but cannot be reached: " << connect_error_;
    clock_ = std::make_shared<ManualClock>(kGateNoon);
    context_.shards = *ShardMap::create(kGateShards);
    context_.clock = clock_;
    ASSERT_TRUE(test::is_ok(open()));  // makes the keyspace and its tables if this run has none yet
    auto claimed = claim_shard();
    ASSERT_TRUE(test::is_ok(claimed));
    shard_ = *claimed;
  }

  // A shard no other case of this run has used, claimed with a lightweight transaction (linearisable
  // across the run's processes). Shard 0 is left alone. ResourceExhausted when every shard is taken.
  static Result<ShardId> claim_shard() {
    const cql::ExecOptions lwt{.consistency = cql::Consistency::kQuorum,
                               .serial_consistency = cql::Consistency::kSerial,
                               .timeout_ms = 30'000};
    const std::string claims = keyspace_ + ".gate_shard_claims";
    auto made = raw_->query("CREATE TABLE IF NOT EXISTS " + claims + " (shard int PRIMARY KEY, test text)",
                            {}, cql::ExecOptions{.timeout_ms = 60'000});
    if (!made.ok()) return Error(Errc::kTransport, "create " + claims + ": " + made.error().to_string());
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string test = std::string(info->test_suite_name()) + "." + info->name();
    for (uint32_t shard = 1; shard < kGateShards; ++shard) {
      auto r = raw_->query("INSERT INTO " + claims + " (shard, test) VALUES (?, ?) IF NOT EXISTS",
                           cql::Values().int32(static_cast<int32_t>(shard)).text(test), lwt);
      if (!r.ok())
        return Error(Errc::kTransport, "claim a shard in " + claims + ": " + r.error().to_string());
      if (r->applied().value_or(false)) return ShardId{shard};
    }
    return Error(Errc::kResourceExhausted, "every shard of " + keyspace_ + " is claimed");
  }

  static ScyllaConfig gate_config() {
    ScyllaConfig config;
    config.hosts = cql::split_hosts(*gate_env("QIM_TEST_CQL_HOSTS"));
    config.keyspace = keyspace_;
    config.replication_factor = gate_cluster_mode() ? 3 : 1;
    config.request_timeout_ms = 15'000;
    return config;
  }

  // Replaces the writer's store (a process restart: empty in-flight table and frontier cache).
  Status open(std::optional<uint32_t> page_max = std::nullopt) {
    store_.reset();
    QIM_ASSIGN_OR_RETURN(store_, fresh_store(page_max));
    return {};
  }

  // Another store over the same keyspace, with its own session and no cache: what a reader (or another
  // process) sees. The writer's store is left as it is.
  Result<std::unique_ptr<MailboxStore>> fresh_store(std::optional<uint32_t> page_max = std::nullopt) {
    QIM_ASSIGN_OR_RETURN(auto backend, open_scylla_backend(context_, gate_config()));
    return std::unique_ptr<MailboxStore>(
        std::make_unique<ContractStore>(std::move(backend), context_, page_max));
  }

  UserId user(int n) const { return test::user_in_shard(context_.shards, shard_, n); }
  // A record of message `id` from user(0) to user(0..chunks-1), sent at `time_ms` (default: now).
  DispatchRecord record(int id, int chunks = 1, std::optional<int64_t> time_ms = std::nullopt) const {
    std::vector<std::vector<UserId>> c;
    for (int i = 0; i < chunks; ++i) c.push_back({user(i)});
    return test::make_record("d" + std::to_string(id),
                             test::make_message(id, user(0), time_ms.value_or(clock_->now_ms())), c);
  }
  Result<FinishOutcome> materialise(const DispatchRecord& r, uint64_t offset, MailboxSeq previous,
                                    uint32_t epoch = 1) {
    return test::materialise(*store_, shard_, Epoch{epoch}, r, Offset{offset}, previous);
  }
  Result<cql::Rows> raw(const std::string& cql, const cql::Values& values = {}) {
    auto r = raw_->query(cql, values, cql::ExecOptions{.consistency = cql::Consistency::kQuorum});
    if (!r.ok()) return Error(Errc::kTransport, r.error().to_string());
    return std::move(r).value();
  }
  std::string table(const char* name) const { return keyspace_ + "." + name; }
  int32_t shard_value() const { return static_cast<int32_t>(shard_.value); }
  // The day buckets the retention ledger of `u` lists, read from the table (not through any store).
  std::set<int64_t> ledger_buckets(const UserId& u) {
    std::set<int64_t> out;
    auto rows = raw("SELECT live_buckets FROM " + table("mailbox_retention_meta") + " WHERE user_id = ?",
                    cql::Values().text(u.str()));
    EXPECT_TRUE(test::is_ok(rows));
    if (!rows.ok() || rows->empty() || (*rows)[0].is_null(0)) return out;
    auto list = (*rows)[0].get_i64_list(0);
    EXPECT_TRUE(list.ok());
    if (list.ok()) out.insert(list->begin(), list->end());
    return out;
  }
  // The LWTs the writer's store makes while materialising `r` at `offset` after `previous`.
  uint64_t lwts_of(const DispatchRecord& r, uint64_t offset, MailboxSeq previous) {
    const OpCounts before = store_->op_counts();
    EXPECT_TRUE(test::is_ok(materialise(r, offset, previous)));
    return (store_->op_counts() - before).lwts;
  }

  static inline std::string keyspace_;
  static inline std::string connect_error_;
  static inline cql::Session* raw_ = nullptr;
  ShardId shard_;
  std::shared_ptr<ManualClock> clock_;
  BackendContext context_;
  std::unique_ptr<MailboxStore> store_;
};

// The seqs of `entries`, in order: what a reader was shown.
inline std::vector<MailboxSeq> seqs_of(const std::vector<MailboxEntry>& entries) {
  std::vector<MailboxSeq> out;
  for (const auto& e : entries) out.push_back(e.seq);
  return out;
}

}  // namespace qim
