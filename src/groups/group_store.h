#pragma once
// Where group membership is kept: per group a meta row, one row per user who was ever a member (role and
// intervals, groups/membership.h), one outcome row per op read, and a user -> groups index for GROUPS.
// Fanout is the only writer (it applies ops at their Outbox offsets); the gateway reads it to refuse
// early and to answer GROUPS / GROUP_MEMBERS.
//
// Backends: RocksDB for the embedded deployment (embedded/), and, for the distributed ones, Redis and CQL
// beside the mailbox store's engines, chosen by open_group_store.h. Every backend keeps the same contract
// (tests/group_store_contract_test.cc).

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/name.h"
#include "core/status.h"
#include "groups/membership.h"
#include "mailbox/op_counters.h"

namespace qim {

// Thread-safe: fanout writes while gateways read.
class GroupStore {
 public:
  virtual ~GroupStore() = default;

  // Writes `change` all or nothing: its outcome row, meta, member rows and index rows. Idempotent: a change
  // whose (group, offset) outcome is already stored writes nothing. Transport, Timeout or Io if it could
  // not be written (nothing was, or a retry of the same change completes it).
  virtual Status apply(const GroupChange& change) = 0;
  // The whole group in one range read (meta, every member row, every outcome); nullopt for a group with
  // no meta row (never created, or a create that was refused). CorruptEntry naming the group and row if a
  // row does not decode; Transport/Timeout/Io.
  virtual Result<std::optional<GroupState>> load(const GroupId& group) = 0;
  // Point reads for the gateway: the meta row; one member's row (current or past member); the outcome of
  // the op read at `offset`. nullopt when absent. Errors as load.
  virtual Result<std::optional<GroupMeta>> meta(const GroupId& group) = 0;
  virtual Result<std::optional<GroupMemberRecord>> member(const GroupId& group, const UserId& user) = 0;
  virtual Result<std::optional<GroupOpOutcome>> outcome(const GroupId& group, uint64_t offset) = 0;
  // The groups `user` is a member of now, sorted by group id. Errors as load.
  virtual Result<std::vector<GroupId>> groups_of(const UserId& user) = 0;

  // Operations issued so far (reads per load/point read, inserts/updates per row written).
  virtual OpCounts op_counts() const = 0;
};

}  // namespace qim
