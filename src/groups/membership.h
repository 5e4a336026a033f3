#pragma once
// A group's versioned membership and the one place its rules live. Fanout applies each group op at the
// Outbox offset it read it from, in offset order; the result is durable in the group store
// (groups/group_store.h). A member's time in the group is a list of intervals of offsets, so "who was a
// member at offset o" is answered the same on every replay, however far the membership has moved on:
//
//   - a message at offset o goes to the users whose interval holds o (and only if its sender's does);
//   - an add at o opens an interval at o (the added member receives the op's own system entry);
//   - a remove or leave at o closes it at o, inclusive (the removed member receives the op that removed
//     it, and nothing after).
//
// An op read again (a replay) is not applied again: its outcome at that offset (applied, or refused and
// why) is part of the state, so a replay yields the same system entries and recipients.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/name.h"
#include "core/status.h"
#include "groups/group_op.h"

namespace qim {

inline constexpr uint64_t kOpenInterval = UINT64_MAX;
inline constexpr uint32_t kDefaultGroupMaxMembers = 10'000;  // QIM_GROUP_MAX_MEMBERS
// Times one user may join one group (intervals of its member row). The writer's bound: an add that would
// open one more interval is refused (GROUP_FULL), so no row grows past what the reader takes
// (kMaxStoredIntervals in groups/group_codec.cc, which is larger: rows written by earlier builds still load).
// 1,024 keeps the row, rewritten whole at each change of the member, at 16 KiB (docs/adr/0052).
inline constexpr uint32_t kMaxMemberIntervals = 1024;

// [joined_at, left_at], Outbox offsets, both inclusive; left_at kOpenInterval while still a member.
struct MemberInterval {
  uint64_t joined_at = 0;
  uint64_t left_at = kOpenInterval;
  bool operator==(const MemberInterval&) const = default;
};

// Every user who was ever a member of the group, with its current role and its intervals, oldest first.
struct GroupMemberRecord {
  UserId user;
  GroupRole role = GroupRole::kMember;
  std::vector<MemberInterval> intervals;

  bool current() const { return !intervals.empty() && intervals.back().left_at == kOpenInterval; }
  bool member_at(uint64_t offset) const;
  // Where the current interval began; nullopt if not a member now.
  std::optional<uint64_t> joined_at() const;
  bool operator==(const GroupMemberRecord&) const = default;
};

// Why an op (or a message) is refused; each is one ERROR code on the wire (docs/protocol.md "Groups").
enum class GroupRefusal : uint8_t {
  kNone = 0,
  kUnknownGroup = 1,  // UNKNOWN_GROUP: no such group (or a create of an existing one: INVALID_ARGUMENT)
  kNotMember = 2,     // NOT_A_MEMBER: the actor is not a member now
  kNotAllowed = 3,    // NOT_ALLOWED: the actor's role does not allow it, or the target is the owner
  kFull = 4,          // GROUP_FULL: over QIM_GROUP_MAX_MEMBERS, or an add of a user who joined
                      // kMaxMemberIntervals times already
  kInvalid = 5,       // INVALID_ARGUMENT: e.g. set_role to owner, create of a group that exists
};

// What one op read at one offset came to. `reason` names why when it was refused.
struct GroupOpOutcome {
  bool applied = false;
  GroupRefusal refusal = GroupRefusal::kNone;
  std::string reason;
  bool operator==(const GroupOpOutcome&) const = default;
};

// A group's small, always-read row.
struct GroupMeta {
  GroupId group;
  std::string name;
  UserId owner;
  uint64_t created_at = 0;    // offset of the create op
  uint32_t member_count = 0;  // current members
  bool operator==(const GroupMeta&) const = default;
};

// What applying one op changes: written atomically by GroupStore::apply. Idempotent by (group, offset).
struct GroupChange {
  GroupId group;
  uint64_t offset = 0;
  GroupOpOutcome outcome;
  std::optional<GroupMeta> meta;           // the new meta row, when the op changed it
  std::vector<GroupMemberRecord> members;  // the changed member rows, in full
  std::vector<UserId> joined;              // user -> groups index: rows to add
  std::vector<UserId> left;                //                       rows to remove
};

// The whole state of one group: what GroupStore::load reads in one range read and fanout caches.
// Not thread-safe; fanout serialises the ops of one group (one Outbox partition).
class GroupState {
 public:
  // An unknown group: only a create applies to it.
  explicit GroupState(GroupId group) : group_(std::move(group)) {}
  GroupState(GroupMeta meta, std::vector<GroupMemberRecord> members, std::map<uint64_t, GroupOpOutcome> ops);

  const GroupId& group() const { return group_; }
  bool exists() const { return meta_.has_value(); }
  const std::optional<GroupMeta>& meta() const { return meta_; }
  const std::map<UserId, GroupMemberRecord>& members() const { return members_; }
  const std::map<uint64_t, GroupOpOutcome>& ops() const { return ops_; }
  const GroupMemberRecord* member(const UserId& user) const;

  // The op `op` by `actor` read at `offset`. If an op at `offset` was applied or refused before, returns
  // that outcome and an empty change (nothing to write). Otherwise decides it against the state as it is
  // (every earlier op applied), updates this state and returns the change to persist. `max_members`
  // bounds the current members after the op (create, add). Never an error: a refusal is an outcome.
  GroupChange apply(const GroupOp& op, const UserId& actor, uint64_t offset, uint32_t max_members);
  // The outcome recorded at `offset`, if an op was read there.
  const GroupOpOutcome* outcome_at(uint64_t offset) const;

  // The members at `offset`, sorted.
  std::vector<UserId> members_at(uint64_t offset) const;
  bool member_at(const UserId& user, uint64_t offset) const;

 private:
  GroupOpOutcome decide(const GroupOp& op, const UserId& actor, uint32_t max_members) const;

  GroupId group_;
  std::optional<GroupMeta> meta_;
  std::map<UserId, GroupMemberRecord> members_;
  std::map<uint64_t, GroupOpOutcome> ops_;
};

// The text of a system entry for people, e.g. "bob added carol, dave"; the entry's body is
// `{"group_op":"add","by":"bob","members":["carol","dave"],"text":"bob added carol, dave"}` (plus "name"
// or "role" where the op has one; over 20 members, the first 20 and "count"); docs/protocol.md "Groups".
std::string group_op_body(const GroupOp& op, const UserId& actor);

}  // namespace qim
