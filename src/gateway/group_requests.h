#pragma once
// The gateway's side of groups (docs/protocol.md "Groups"): the GROUP_* frames, and the membership check
// of SEND and HISTORY to a group. Everything here blocks (store reads, the Outbox append, waiting for
// fanout to apply an op), so connections run it on a pool, never on their strand.
//
// The checks are against the current membership, so that a refusal is quick and typed and nothing is
// appended for it; fanout decides again at the op's offset and is authoritative (groups/membership.h).

#include <cstdint>
#include <optional>
#include <string>

#include "auth/token.h"
#include "core/clock.h"
#include "gateway/protocol/client_frame.h"
#include "gateway/protocol/wire_code.h"
#include "groups/group_store.h"
#include "log/log.h"

namespace qim {

struct GroupRequestDeps {
  GroupStore* store = nullptr;
  Log* outbox = nullptr;
  const Clock* clock = nullptr;
  uint32_t max_members = kDefaultGroupMaxMembers;  // QIM_GROUP_MAX_MEMBERS
  int64_t apply_wait_ms = 5'000;                   // QIM_GROUP_APPLY_WAIT_MS
};

// The wire code of a refusal (UNKNOWN_GROUP, NOT_A_MEMBER, NOT_ALLOWED, GROUP_FULL, INVALID_ARGUMENT).
WireCode wire_code_of(GroupRefusal refusal);

// Whether `user` is a member of `group` now. The member's row when it is; else the refusal to send
// (UNKNOWN_GROUP, NOT_A_MEMBER, or the wire code of a store error).
struct GroupCheck {
  std::optional<GroupMemberRecord> member;
  WireCode code = WireCode::kInternal;
  std::string message;
};
GroupCheck check_group_member(GroupStore& store, const GroupId& group, const UserId& user);

// Answers one GROUP_* frame of `who` with the frame to send back (GROUP_OK, GROUPS_LIST,
// GROUP_MEMBERS_LIST or ERROR). A change is appended only if the current membership allows it; its
// GROUP_OK waits until fanout has applied it (up to apply_wait_ms, then UNAVAILABLE).
std::string answer_group_frame(const GroupRequestDeps& deps, const std::string& ref, const Principal& who,
                               const GroupFrame& frame);

// A new group id: 128 random bits as 32 hex digits (unguessable; a valid name).
GroupId mint_group_id();

}  // namespace qim
