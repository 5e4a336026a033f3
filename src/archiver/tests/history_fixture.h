#pragma once
// The HistoryStore backend a contract test binary runs against (history_contract_test.cc). Each binary
// links exactly one fixture: rocks_history_fixture.cc (label unit), cql_history_fixture.cc (label
// scylla, QIM_TEST_CQL_HOSTS), redis_history_fixture.cc (label redis, QIM_TEST_REDIS). A fixture whose
// engine is not configured makes every test skip, naming the variable.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "archiver/history_store.h"

namespace qim::test {

// One test's stored history (a directory, a keyspace, a key prefix), removed with the harness.
class HistoryHarness {
 public:
  virtual ~HistoryHarness() = default;
  // A new store instance over this harness's data: how tests read through a fresh reader. The embedded
  // store admits one opener at a time, so tests destroy the previous store first.
  virtual Result<std::unique_ptr<HistoryStore>> open() = 0;
  // Writes, with the engine's own commands (not through the store), an index entry of `conversation`
  // naming `id` and a message row for `id` that does not decode. `current` is the store open right now
  // (the embedded one holds the only handle on its files).
  virtual Status plant_corrupt(HistoryStore& current, const ConversationId& conversation, MessageId id) = 0;
  // Whether any row of `conversation` the engine holds contains `bytes`, read with the engine's own
  // commands (a RocksDB iterator, HGETALL, a CQL SELECT), not through the store: how an operator would find
  // a recalled body (docs/adr/0090).
  virtual Result<bool> holds(HistoryStore& current, const ConversationId& conversation,
                             std::string_view bytes) = 0;
};

struct HistoryFixture {
  std::string name;
  // Why the engine cannot be used here (the skip message), or nullopt.
  std::function<std::optional<std::string>()> unavailable = [] { return std::nullopt; };
  std::function<Result<std::unique_ptr<HistoryHarness>>()> make_harness;
};

HistoryFixture history_fixture();

}  // namespace qim::test
