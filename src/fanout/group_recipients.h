#pragma once
// Who receives a group's Outbox record, decided where fanout reads it (groups/membership.h): an op is
// applied at its offset (durably, in the group store, before any dispatch record of it is appended) and
// then goes to the members at that offset; a message goes to the members at its offset if its sender is
// one. A per-group cache (one GroupStore::load per group, then kept current by the ops fanout applies
// itself) makes a message of a 10,000-member group cost no store read at all.
//
// The cache is right because fanout is the only writer of a group's membership and one Outbox partition
// (one consumer) holds every record of a group. A fanout's partitions are fixed for its process's life
// (LogConsumer has no rebalance), so a partition moves to another fanout only with a restart, which
// starts with an empty cache (docs/adr/0035-groups-on-redis-and-cql.md).

#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "groups/group_store.h"
#include "outbox/outbox_record.h"

namespace qim {

struct GroupDecision {
  std::vector<UserId> recipients;  // sorted; empty when skipped
  std::string skipped;             // why the record is not dispatched (a refused op, a non-member's message)
  bool op = false;                 // the record is a membership change
};

// Thread-safe (one mutex: group records are a small part of the Outbox and each costs no store read).
class GroupRecipients {
 public:
  GroupRecipients(GroupStore& store, uint32_t max_members, size_t cache_groups = 1024)
      : store_(store), max_members_(max_members), cache_groups_(cache_groups) {}

  // The decision for `record` (of a group conversation) read at `offset`. An op decided now is written
  // to the store before this returns. The store's errors (Transport, Timeout, Io, CorruptEntry): then
  // nothing is cached for the group, and the caller retries the batch.
  Result<GroupDecision> decide(const OutboxRecord& record, const GroupId& group, uint64_t offset);

  // Whether `user` is the group's owner or an admin and a member at `offset` (its role now: fanout asks
  // at the offset it is reading, and records the outcome of what it decides with it). Store errors as
  // decide.
  Result<bool> moderates(const GroupId& group, const UserId& user, uint64_t offset);

  // The users who were members at one of the `earlier` offsets and are not at `now`, sorted: a recall's
  // former recipients (docs/adr/0160), who received the SEND or an edit and none of what followed their
  // removal. Membership intervals are durable and never rewritten, so a replay gets the same answer. Store
  // errors as decide.
  Result<std::vector<UserId>> former_members(const GroupId& group, std::span<const uint64_t> earlier,
                                             uint64_t now);

  uint64_t loads() const;

 private:
  Result<GroupState*> state_of(const GroupId& group);

  GroupStore& store_;
  const uint32_t max_members_;
  const size_t cache_groups_;
  mutable std::mutex mu_;
  std::unordered_map<GroupId, GroupState> cache_;
  uint64_t loads_ = 0;
};

}  // namespace qim
