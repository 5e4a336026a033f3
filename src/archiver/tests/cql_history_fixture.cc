// The CQL history store under the contract suite, on the cluster of QIM_TEST_CQL_HOSTS: a keyspace per
// harness (created by the store, as in production), dropped with it.
#include "archiver/tests/cql_history_fixture.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "archiver/tests/history_fixture.h"
#include "mailbox/scylla/cql_status.h"

namespace qim::test {

std::optional<std::string> test_cql_hosts() {
  const char* v = std::getenv("QIM_TEST_CQL_HOSTS");  // NOLINT(concurrency-mt-unsafe): read in SetUp only
  return v && *v ? std::optional<std::string>(v) : std::nullopt;
}

std::string unique_history_keyspace() {
  static std::atomic<int> next{0};
  return "history_test_" + std::to_string(::getpid()) + "_" + std::to_string(next++);
}

CqlHistoryOptions test_cql_history_options(const std::string& keyspace) {
  CqlHistoryOptions o;
  o.hosts = cql::split_hosts(test_cql_hosts().value_or(""));
  o.keyspace = keyspace;
  o.request_timeout_ms = 15'000;
  return o;
}

namespace {

class CqlHarness final : public HistoryHarness {
 public:
  CqlHarness(cql::Session admin, std::string keyspace)
      : admin_(std::move(admin)), keyspace_(std::move(keyspace)) {}
  ~CqlHarness() override {
    (void)admin_.query("DROP KEYSPACE IF EXISTS " + keyspace_, {}, cql::ExecOptions{.timeout_ms = 60'000});
  }

  Result<std::unique_ptr<HistoryStore>> open() override {
    QIM_ASSIGN_OR_RETURN(auto store, CqlHistoryStore::open(test_cql_history_options(keyspace_)));
    return std::unique_ptr<HistoryStore>(std::move(store));
  }
  // A message row whose sender is not a user id (':' is refused in names), and its index row.
  Status plant_corrupt(HistoryStore&, const ConversationId& conversation, MessageId id) override {
    const auto q = cql::ExecOptions{.consistency = cql::Consistency::kQuorum};
    const auto raw_id = static_cast<int64_t>(id.value);
    QIM_RETURN_IF_ERROR(scylla::lift(
        admin_.query(
            "INSERT INTO " + keyspace_ +
                ".history_message (message_id, conversation, sender, server_time_ms) VALUES (?, ?, ?, ?)",
            cql::Values().bigint(raw_id).text(conversation.str()).text("not:a:user").bigint(1), q),
        "plant history_message"));
    QIM_RETURN_IF_ERROR(scylla::lift(
        admin_.query("INSERT INTO " + keyspace_ + ".history_index (conversation, message_id) VALUES (?, ?)",
                     cql::Values().text(conversation.str()).bigint(raw_id), q),
        "plant history_index"));
    return {};
  }
  // Every row of the harness's history_message table (its keyspace holds this test's rows only).
  Result<bool> holds(HistoryStore&, const ConversationId&, std::string_view bytes) override {
    QIM_ASSIGN_OR_RETURN(
        cql::Rows rows,
        scylla::lift(admin_.query("SELECT body, client_msg_id FROM " + keyspace_ + ".history_message", {},
                                  cql::ExecOptions{.consistency = cql::Consistency::kQuorum}),
                     "read history_message"));
    for (size_t i = 0; i < rows.size(); ++i) {
      const cql::Row row = rows[i];
      auto body = row.get_blob(0);
      if (!body.ok()) continue;  // null: no body
      std::string_view text(reinterpret_cast<const char*>(body->data()), body->size());
      if (text.find(bytes) != std::string_view::npos) return true;
    }
    return false;
  }

 private:
  cql::Session admin_;
  std::string keyspace_;
};

}  // namespace

HistoryFixture history_fixture() {
  HistoryFixture f;
  f.name = "cql";
  f.unavailable = []() -> std::optional<std::string> {
    if (!test_cql_hosts()) return std::string(kCqlSkipMessage);
    return std::nullopt;
  };
  f.make_harness = []() -> Result<std::unique_ptr<HistoryHarness>> {
    QIM_ASSIGN_OR_RETURN(cql::Session admin,
                         scylla::lift(cql::Session::connect({.hosts = cql::split_hosts(*test_cql_hosts())}),
                                      "connect to QIM_TEST_CQL_HOSTS"));
    return std::unique_ptr<HistoryHarness>(
        std::make_unique<CqlHarness>(std::move(admin), unique_history_keyspace()));
  };
  return f;
}

}  // namespace qim::test
