#pragma once
// The inbox backends the inbox suites run against (inbox_backend_test.cc, inbox_property_test.cc), each
// written beside the mailbox backend of the same engine through a real ContractStore (InboxSession).
//
// A backend joins with one fixture function (its own file, e.g. redis_inbox_fixture.cc) and one line in
// inbox_backends() (inbox_fixtures.cc), guarded by the define its CMake block sets on
// qim_inbox_test_support (see tests/CMakeLists.txt). A backend that needs a server is skipped, naming the
// variable, when it is unset (`unavailable`), as the mailbox fixtures are.

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/status.h"
#include "inbox/inbox_backend.h"
#include "mailbox/store_backend.h"
#include "mailbox/tests/backend_fixture.h"

namespace qim::test {

// One test's stored inbox data (a directory, a key prefix, a keyspace).
class InboxHarness {
 public:
  virtual ~InboxHarness() = default;
  // Opens an inbox backend over this harness's data. Opening again after the previous one is gone is a
  // process restart. Unless the mailbox fixture has limits.single_opener, several may be open at once
  // (a stale owner's process beside the new owner's).
  virtual Result<std::unique_ptr<InboxBackend>> open(const BackendContext& context) = 0;
  // Binds an opened inbox to the mailbox backend it is written beside, before the store writes (the
  // embedded inbox lives in the mailbox's database); nothing for the other engines.
  virtual Status bind(InboxBackend&, StoreBackend&) { return {}; }
};

struct InboxFixture {
  std::string name;        // the test name suffix: memory, embedded, redis, cql
  BackendFixture mailbox;  // the mailbox backend of the same engine, written through ContractStore
  // Why the backend cannot run here (e.g. "QIM_TEST_REDIS is unset"), or nullopt; checked in SetUp.
  std::function<std::optional<std::string>()> unavailable = [] { return std::nullopt; };
  int property_runs = 20;  // seeded histories per run of the property suite
  std::function<Result<std::unique_ptr<InboxHarness>>()> make_harness;
};

inline void PrintTo(const InboxFixture& fixture, std::ostream* os) {
  *os << fixture.name;
}

InboxFixture memory_inbox_fixture();
InboxFixture embedded_inbox_fixture();
InboxFixture redis_inbox_fixture();  // with src/inbox/redis (QIM_TEST_WITH_REDIS_INBOX)
InboxFixture cql_inbox_fixture();    // with src/inbox/cql (QIM_TEST_WITH_CQL_INBOX)

// Every inbox backend of the suites, in the order of their test names.
std::vector<InboxFixture> inbox_backends();

}  // namespace qim::test
