#pragma once
// A membership change of a group, as the gateway appends it to the Outbox (outbox/outbox_record.h) in the
// group's own conversation, so the Outbox's one partition per conversation orders it with the group's
// messages. Fanout applies it at its (partition, offset) (groups/membership.h); docs/protocol.md "Groups".

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/name.h"

namespace qim {

// Rights, lowest first: a member sends and reads; an admin also adds, removes members and renames; the
// owner (one, the creator) also sets roles. Nobody removes the owner; the owner cannot leave.
enum class GroupRole : uint8_t { kMember = 0, kAdmin = 1, kOwner = 2 };

enum class GroupOpKind : uint8_t {
  kCreate = 1,   // members: the initial members besides the creator (the actor, who becomes owner); name
  kAdd = 2,      // members: users to add (as kMember)
  kRemove = 3,   // members: users to remove
  kLeave = 4,    // the actor leaves
  kRename = 5,   // name
  kSetRole = 6,  // members: exactly one user; role (kMember or kAdmin)
};

inline constexpr size_t kMaxGroupNameBytes = 256;
// Users one op may name: a 10,000-member group is built with a few dozen ops, and the op's system entry
// (which lists them, at most 67 bytes each) stays under the body limit of a mailbox entry (64 KiB).
inline constexpr size_t kMaxUsersPerGroupOp = 500;

struct GroupOp {
  GroupOpKind kind = GroupOpKind::kCreate;
  std::vector<UserId> members;
  std::string name;
  GroupRole role = GroupRole::kMember;

  bool operator==(const GroupOp&) const = default;
};

// The wire names: "create", "add", "remove", "leave", "rename", "set_role"; "member", "admin", "owner".
std::string_view group_op_name(GroupOpKind kind);
std::string_view group_role_name(GroupRole role);

}  // namespace qim
