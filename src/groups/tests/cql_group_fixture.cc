// The CQL group store under the contract suite, on the cluster of QIM_TEST_CQL_HOSTS: a keyspace per
// harness (created by the store, as in production), dropped with it.
#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "groups/cql/cql_group_store.h"
#include "groups/tests/group_store_fixture.h"
#include "mailbox/scylla/cql_status.h"

namespace qim::test {

namespace {

constexpr const char* kSkip =
    "QIM_TEST_CQL_HOSTS is unset: no CQL cluster to test the CQL group store against";

std::optional<std::string> cql_hosts() {
  const char* v = std::getenv("QIM_TEST_CQL_HOSTS");  // NOLINT(concurrency-mt-unsafe): read in SetUp only
  return v && *v ? std::optional<std::string>(v) : std::nullopt;
}

class CqlHarness final : public GroupHarness {
 public:
  CqlHarness(cql::Session admin, std::string keyspace)
      : admin_(std::move(admin)), keyspace_(std::move(keyspace)) {}
  ~CqlHarness() override {
    (void)admin_.query("DROP KEYSPACE IF EXISTS " + keyspace_, {}, cql::ExecOptions{.timeout_ms = 60'000});
  }

  Result<std::unique_ptr<GroupStore>> open() override {
    CqlGroupOptions o;
    o.hosts = cql::split_hosts(cql_hosts().value_or(""));
    o.keyspace = keyspace_;
    o.request_timeout_ms = 15'000;
    QIM_ASSIGN_OR_RETURN(auto store, CqlGroupStore::open(o));
    return std::unique_ptr<GroupStore>(std::move(store));
  }
  // A member row (kind 1, keyed by the user) whose bytes are not a member row.
  Status plant_corrupt_member(GroupStore&, const GroupId& group, const UserId& user) override {
    QIM_RETURN_IF_ERROR(scylla::lift(
        admin_.query(
            "INSERT INTO " + keyspace_ + ".group_rows (group_id, kind, row_key, row) VALUES (?, 1, ?, ?)",
            cql::Values().text(group.str()).blob(user.str()).blob(std::string_view("not a member row")),
            cql::ExecOptions{.consistency = cql::Consistency::kQuorum}),
        "plant group_rows"));
    return {};
  }

 private:
  cql::Session admin_;
  std::string keyspace_;
};

}  // namespace

GroupFixture group_fixture() {
  GroupFixture f;
  f.name = "cql";
  f.unavailable = []() -> std::optional<std::string> {
    if (!cql_hosts()) return std::string(kSkip);
    return std::nullopt;
  };
  f.make_harness = []() -> Result<std::unique_ptr<GroupHarness>> {
    static std::atomic<int> next{0};
    QIM_ASSIGN_OR_RETURN(cql::Session admin,
                         scylla::lift(cql::Session::connect({.hosts = cql::split_hosts(*cql_hosts())}),
                                      "connect to QIM_TEST_CQL_HOSTS"));
    return std::unique_ptr<GroupHarness>(std::make_unique<CqlHarness>(
        std::move(admin), "groups_test_" + std::to_string(::getpid()) + "_" + std::to_string(next++)));
  };
  return f;
}

}  // namespace qim::test
