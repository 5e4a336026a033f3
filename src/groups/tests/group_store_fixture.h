#pragma once
// The GroupStore backend a contract test binary runs against (group_store_contract_test.cc). Each binary
// links exactly one fixture; one whose engine is not configured makes every test skip, naming the
// variable.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "groups/group_store.h"

namespace qim::test {

// One test's stored groups (a directory, a keyspace, a key prefix), removed with the harness.
class GroupHarness {
 public:
  virtual ~GroupHarness() = default;
  // A new store instance over this harness's data: how tests read through a fresh reader. The embedded
  // store admits one opener at a time, so tests destroy the previous store first.
  virtual Result<std::unique_ptr<GroupStore>> open() = 0;
  // Writes, with the engine's own commands, a member row of (group, user) that does not decode.
  virtual Status plant_corrupt_member(GroupStore& current, const GroupId& group, const UserId& user) = 0;
};

struct GroupFixture {
  std::string name;
  std::function<std::optional<std::string>()> unavailable = [] { return std::nullopt; };
  std::function<Result<std::unique_ptr<GroupHarness>>()> make_harness;
};

GroupFixture group_fixture();

}  // namespace qim::test
