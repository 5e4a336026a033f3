// The scylla backend under the contract suite, against the CQL cluster at QIM_TEST_CQL_HOSTS. Each
// harness is a keyspace of its own (RF 3 when QIM_TEST_CQL_CLUSTER=1), dropped with it. A restart opens a
// new session over the same keyspace.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>

#include "mailbox/scylla/cql_status.h"
#include "mailbox/scylla/scylla_backend.h"
#include "mailbox/tests/backend_fixture.h"

namespace qim::test {

namespace {

std::optional<std::string> cql_hosts() {
  const char* v = std::getenv("QIM_TEST_CQL_HOSTS");  // NOLINT(concurrency-mt-unsafe): read in SetUp only
  return v && *v ? std::optional<std::string>(v) : std::nullopt;
}

class ScyllaHarness final : public BackendHarness {
 public:
  ScyllaHarness(cql::Session admin, std::string keyspace)
      : admin_(std::move(admin)), keyspace_(std::move(keyspace)) {}
  ~ScyllaHarness() override {
    (void)admin_.query("DROP KEYSPACE IF EXISTS " + keyspace_, {}, cql::ExecOptions{.timeout_ms = 60'000});
  }

  Result<std::unique_ptr<StoreBackend>> open(const BackendContext& context) override {
    ScyllaConfig config;
    config.hosts = cql::split_hosts(*cql_hosts());
    config.keyspace = keyspace_;
    const char* cluster = std::getenv("QIM_TEST_CQL_CLUSTER");  // NOLINT(concurrency-mt-unsafe)
    config.replication_factor = cluster && std::string(cluster) == "1" ? 3 : 1;
    config.request_timeout_ms = 15'000;
    return open_scylla_backend(context, config);
  }

  // A DELETE writes a wall-clock tombstone: fine for a test of a missing proof, never done by the store.
  Status drop_proof(StoreBackend&, const UserId& user, DayBucket bucket) override {
    auto done = admin_.query(
        "DELETE FROM " + keyspace_ + ".mailbox_retention_bucket_v2 WHERE user_id = ? AND day_bucket = ?",
        cql::Values().text(user.str()).bigint(bucket.value),
        cql::ExecOptions{.consistency = cql::Consistency::kQuorum});
    if (!done.ok()) return scylla::to_error(done.error(), "drop proof");
    return {};
  }

  // Every row of the keyspace's mailbox_entry (a test's keyspace holds a few), each column that holds
  // message bytes.
  Result<bool> engine_holds(StoreBackend&, std::string_view bytes) override {
    auto rows = admin_.query("SELECT body, client_msg_id FROM " + keyspace_ + ".mailbox_entry", {},
                             cql::ExecOptions{.consistency = cql::Consistency::kQuorum});
    if (!rows.ok()) return scylla::to_error(rows.error(), "scan mailbox_entry");
    for (size_t i = 0; i < rows->size(); ++i) {
      const cql::Row row = rows->row(i);
      if (!row.is_null(0)) {
        auto body = row.get_blob(0);
        if (!body.ok()) return scylla::to_error(body.error(), "mailbox_entry.body");
        const std::string_view text(reinterpret_cast<const char*>(body->data()), body->size());
        if (text.find(bytes) != std::string_view::npos) return true;
      }
    }
    return false;
  }

  // The body cell alone, through this harness's own session, USING TIMESTAMP an hour past this machine's
  // clock: the store's entries carry the coordinator's clock (no client timestamp), so this is a write
  // made by a writer an hour ahead of it (docs/adr/0164).
  Status write_body_ahead(StoreBackend&, const UserId& user, MailboxSeq seq, std::string_view body) override {
    const auto ahead = std::chrono::system_clock::now() + std::chrono::hours(1);
    const int64_t ahead_us =
        std::chrono::duration_cast<std::chrono::microseconds>(ahead.time_since_epoch()).count();
    auto done = admin_.query("UPDATE " + keyspace_ +
                                 ".mailbox_entry USING TIMESTAMP ? SET body = ? WHERE user_id = ? AND "
                                 "epoch = ? AND log_offset = ?",
                             cql::Values()
                                 .bigint(ahead_us)
                                 .blob(body)
                                 .text(user.str())
                                 .int32(static_cast<int32_t>(seq.epoch().value))
                                 .bigint(static_cast<int64_t>(seq.offset().value)),
                             cql::ExecOptions{.consistency = cql::Consistency::kQuorum});
    if (!done.ok()) return scylla::to_error(done.error(), "write mailbox_entry.body ahead");
    return {};
  }

 private:
  cql::Session admin_;
  std::string keyspace_;
};

}  // namespace

BackendFixture scylla_fixture() {
  BackendFixture f;
  f.name = "scylla";
  f.property_runs = 1;  // every run reconnects and works through a real cluster
  f.limits.no_clock_identity_ttl = "identity TTL is counted by the CQL server in real time";
  f.limits.no_clock_entry_ttl = "entry TTL is counted by the CQL server in real time (the CQL gate tests it)";
  f.unavailable = []() -> std::optional<std::string> {
    if (!cql_hosts()) return "QIM_TEST_CQL_HOSTS is unset: no CQL cluster to test against";
    return std::nullopt;
  };
  f.make_harness = []() -> Result<std::unique_ptr<BackendHarness>> {
    static std::atomic<int> next{0};
    QIM_ASSIGN_OR_RETURN(cql::Session admin,
                         scylla::lift(cql::Session::connect({.hosts = cql::split_hosts(*cql_hosts())}),
                                      "connect to QIM_TEST_CQL_HOSTS"));
    std::string keyspace = "qim_ct_" + std::to_string(::getpid()) + "_" + std::to_string(next++);
    return std::unique_ptr<BackendHarness>(
        std::make_unique<ScyllaHarness>(std::move(admin), std::move(keyspace)));
  };
  return f;
}

}  // namespace qim::test
