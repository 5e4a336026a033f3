#pragma once
// The gateway's side of groups (docs/protocol.md "Groups"): the GROUP_* frames, and the membership check
// of SEND and HISTORY to a group. The functions here do store reads (they block), so connections run them
// on a pool, never on their strand. A change is planned here, appended by the connection (in the order of
// its frames, with its SENDs), and its outcome polled here until fanout decided it: no thread waits for
// fanout.
//
// The checks are against the current membership, so that a refusal is quick and typed and nothing is
// appended for it; fanout decides again at the op's offset and is authoritative (groups/membership.h).
// They read the actor's member row and the group's meta row (and the rows of the users an op names, only
// where the op's rule depends on them), never the whole group with every outcome ever recorded.

#include <cstdint>
#include <optional>
#include <string>

#include "auth/token.h"
#include "core/clock.h"
#include "gateway/protocol/client_frame.h"
#include "gateway/protocol/wire_code.h"
#include "groups/group_store.h"
#include "inbox/inbox_backend.h"
#include "log/log.h"
#include "outbox/outbox_record.h"
#include "users/user_registry.h"

namespace qim {

struct GroupRequestDeps {
  GroupStore* store = nullptr;
  Log* outbox = nullptr;
  const Clock* clock = nullptr;
  uint32_t max_members = kDefaultGroupMaxMembers;  // QIM_GROUP_MAX_MEMBERS
  int64_t apply_wait_ms = 5'000;                   // QIM_GROUP_APPLY_WAIT_MS
  // Optional: blocking (inbox/privacy.h). A GROUP_CREATE or GROUP_ADD naming a user who blocks the caller
  // is refused BLOCKED (one read of who blocks the caller); null: not checked.
  InboxBackend* privacy = nullptr;
  // Optional: the user registry (users/user_registry.h, QIM_USER_REGISTRY=1). A GROUP_CREATE or GROUP_ADD
  // naming a user it does not hold is refused UNKNOWN_USER; null: any name.
  const UserRegistry* users = nullptr;
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

// A GROUP_* frame after the gateway's check: either its whole answer (GROUPS_LIST, GROUP_MEMBERS_LIST, or
// the ERROR of a refusal or of a failed read), or the change to append.
struct GroupPlan {
  std::string answer;                  // non-empty: send this; nothing is appended
  std::optional<OutboxRecord> record;  // else: append this to `partition` of the Outbox
  uint32_t partition = 0;
  GroupId group;
  GroupOpKind kind = GroupOpKind::kCreate;
};
// Checks one GROUP_* frame of `who` against the current membership (the same rules fanout applies).
GroupPlan plan_group_frame(const GroupRequestDeps& deps, const std::string& ref, const Principal& who,
                           const GroupFrame& frame);
// After `plan`'s record was appended at `offset`: GROUP_OK once fanout applied it, the refusal's ERROR if
// fanout refused it, an ERROR if the store read failed; nullopt while fanout has not decided yet.
std::optional<std::string> group_outcome_answer(GroupStore& store, const std::string& ref,
                                                const GroupPlan& plan, Offset offset);
// The ERROR of a change whose append failed.
std::string group_append_failed(const std::string& ref, const Error& error);
// The ERROR of a change appended but not decided by fanout within QIM_GROUP_APPLY_WAIT_MS.
std::string group_not_applied(const std::string& ref);

// A new group id: 128 random bits as 32 hex digits (unguessable; a valid name).
GroupId mint_group_id();

}  // namespace qim
