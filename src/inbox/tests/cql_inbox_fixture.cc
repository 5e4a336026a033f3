// The CQL inbox under the inbox suites, beside the scylla mailbox, on the cluster of QIM_TEST_CQL_HOSTS:
// a keyspace per harness (created by the backend, as in production; RF 3 when QIM_TEST_CQL_CLUSTER=1),
// dropped with it. A restart opens a new session over the same keyspace.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "inbox/cql/cql_inbox_backend.h"
#include "inbox/tests/inbox_fixture.h"
#include "mailbox/scylla/cql_status.h"

namespace qim::test {

namespace {

std::optional<std::string> cql_hosts() {
  const char* v = std::getenv("QIM_TEST_CQL_HOSTS");  // NOLINT(concurrency-mt-unsafe): read in SetUp only
  return v && *v ? std::optional<std::string>(v) : std::nullopt;
}

class CqlInboxHarness final : public InboxHarness {
 public:
  CqlInboxHarness(cql::Session admin, std::string keyspace)
      : admin_(std::move(admin)), keyspace_(std::move(keyspace)) {}
  ~CqlInboxHarness() override {
    (void)admin_.query("DROP KEYSPACE IF EXISTS " + keyspace_, {}, cql::ExecOptions{.timeout_ms = 60'000});
  }

  Result<std::unique_ptr<InboxBackend>> open(const BackendContext& context) override {
    CqlInboxOptions o;
    o.hosts = cql::split_hosts(cql_hosts().value_or(""));
    o.keyspace = keyspace_;
    const char* cluster = std::getenv("QIM_TEST_CQL_CLUSTER");  // NOLINT(concurrency-mt-unsafe)
    o.replication_factor = cluster && std::string(cluster) == "1" ? 3 : 1;
    o.request_timeout_ms = 15'000;
    o.entry_ttl_ms = context.entry_ttl_ms();
    QIM_ASSIGN_OR_RETURN(auto backend, CqlInboxBackend::open(o));
    return std::unique_ptr<InboxBackend>(std::move(backend));
  }

 private:
  cql::Session admin_;
  std::string keyspace_;
};

}  // namespace

InboxFixture cql_inbox_fixture() {
  InboxFixture f;
  f.name = "cql";
  f.mailbox = scylla_fixture();
  f.property_runs = 1;  // every run makes two keyspaces and works through a real cluster
  f.unavailable = []() -> std::optional<std::string> {
    if (!cql_hosts()) return "QIM_TEST_CQL_HOSTS is unset: no CQL cluster to test the CQL inbox against";
    return std::nullopt;
  };
  f.make_harness = []() -> Result<std::unique_ptr<InboxHarness>> {
    static std::atomic<int> next{0};
    QIM_ASSIGN_OR_RETURN(cql::Session admin,
                         scylla::lift(cql::Session::connect({.hosts = cql::split_hosts(*cql_hosts())}),
                                      "connect to QIM_TEST_CQL_HOSTS"));
    return std::unique_ptr<InboxHarness>(std::make_unique<CqlInboxHarness>(
        std::move(admin), "qim_inbox_ct_" + std::to_string(::getpid()) + "_" + std::to_string(next++)));
  };
  return f;
}

}  // namespace qim::test
