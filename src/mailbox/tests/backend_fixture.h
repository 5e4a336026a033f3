#pragma once
// The backends the MailboxStore contract suite runs against (contract_test.cc, contract_property_test.cc).
//
// Every test gets a fresh, isolated place for its data (a directory, a key prefix, a keyspace) from its
// backend's fixture: a BackendHarness. Opening the harness again after the previous backend is gone is
// how tests simulate a process restart: a new ContractStore over the same stored data, with an empty
// in-flight table and frontier cache.
//
// A backend joins the suite with one fixture function and one line in contract_backends()
// (backend_fixtures.cc). A backend that needs a server reads where it is from the environment and is
// skipped (naming the variable) when it is unset:
//   redis:  QIM_TEST_REDIS=host:port       e.g. a key prefix per harness, removed when it is destroyed
//   scylla: QIM_TEST_CQL_HOSTS=host[,...]  e.g. a keyspace per harness, dropped when it is destroyed
// What a backend cannot do goes in BackendLimits; the tests that need it are skipped naming the reason.

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/status.h"
#include "mailbox/store_backend.h"

namespace qim::test {

// Each field, when set, says why the backend cannot do that thing (the skip message).
struct BackendLimits {
  // Identity rows do not expire by BackendContext::clock (so a ManualClock cannot age them 31 days).
  std::optional<std::string> no_clock_identity_ttl;
  // Entry TTL does not follow BackendContext::clock (e.g. a server-side TTL counted in real time).
  std::optional<std::string> no_clock_entry_ttl;
  // Only one backend may be open over the data at a time (so there can be no stale second owner).
  std::optional<std::string> single_opener;
  // Writes are not ordered by a timestamp their writer stamps (so no writer's clock can be ahead).
  std::optional<std::string> no_writer_clock;
};

// One test's stored data.
class BackendHarness {
 public:
  virtual ~BackendHarness() = default;
  // Opens a backend over this harness's data. Unless the fixture has limits.single_opener, several may be
  // open at once (an owner and a stale one); otherwise the backend it opened before must be destroyed.
  virtual Result<std::unique_ptr<StoreBackend>> open(const BackendContext& context) = 0;
  // Deletes every proof row of (user, bucket), through `backend` (the one this harness opened last).
  virtual Status drop_proof(StoreBackend& backend, const UserId& user, DayBucket bucket) = 0;
  // Whether the engine itself holds `bytes` anywhere in a stored entry of this harness's data, read past
  // the store (docs/adr/0129's check that a recall leaves no body): the memory backend's rows, a
  // read-only RocksDB open iterating the entries family, every key of the Redis prefix with its values,
  // every row of the keyspace's mailbox_entry. `backend` is the one this harness opened last.
  virtual Result<bool> engine_holds(StoreBackend& backend, std::string_view bytes) = 0;
  // Writes the body of the stored entry (user, seq) again as `body`, past the store, as a writer whose
  // clock is an hour ahead of the one the store's writes carry (CQL: the body cell USING TIMESTAMP now +
  // 1 h, in microseconds). Only for fixtures without limits.no_writer_clock; the others answer
  // InvalidArgument.
  virtual Status write_body_ahead(StoreBackend& /*backend*/, const UserId& /*user*/, MailboxSeq /*seq*/,
                                  std::string_view /*body*/) {
    return Error(Errc::kInvalidArgument, "this backend's writes carry no writer's clock");
  }
};

struct BackendFixture {
  std::string name;  // the test name suffix: memory, embedded, redis, scylla
  BackendLimits limits;
  // Why the backend cannot run here at all (e.g. "QIM_TEST_REDIS is unset"), or nullopt. Checked in
  // each test's SetUp, never while tests are listed.
  std::function<std::optional<std::string>()> unavailable = [] { return std::nullopt; };
  // How many seeded random runs the property suite makes (a slow backend makes fewer).
  int property_runs = 20;
  // A fresh, isolated harness for one test.
  std::function<Result<std::unique_ptr<BackendHarness>>()> make_harness;
};

inline void PrintTo(const BackendFixture& fixture, std::ostream* os) {
  *os << fixture.name;
}

BackendFixture memory_fixture();
BackendFixture embedded_fixture();
BackendFixture scylla_fixture();  // built when the CQL client is (QIM_WITH_CQL)
BackendFixture redis_fixture();   // built with the redis backend (src/mailbox/redis)

// Every backend the suite runs against, in the order of their test names.
std::vector<BackendFixture> contract_backends();

}  // namespace qim::test
