#include "gateway/group_requests.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>

#include "gateway/protocol/server_frame.h"
#include "inbox/privacy.h"

namespace qim {

namespace {

std::string error_of(const std::string& ref, const Error& e, std::string_view what) {
  const WireCode code = wire_code_of(e.code());
  if (code == WireCode::kInternal) {
    spdlog::error("gateway: {} failed: {}", what, e.to_string());
    return encode_error(ref, code, "the group store read failed on the server (logged)");
  }
  return encode_error(ref, code, e.message());
}

GroupOpKind op_kind_of(GroupRequest r) {
  switch (r) {
    case GroupRequest::kCreate:
      return GroupOpKind::kCreate;
    case GroupRequest::kAdd:
      return GroupOpKind::kAdd;
    case GroupRequest::kRemove:
      return GroupOpKind::kRemove;
    case GroupRequest::kLeave:
      return GroupOpKind::kLeave;
    case GroupRequest::kRename:
      return GroupOpKind::kRename;
    case GroupRequest::kRole:
    case GroupRequest::kList:
    case GroupRequest::kMembers:
      break;
  }
  return GroupOpKind::kSetRole;
}

std::string list_groups(const GroupRequestDeps& deps, const std::string& ref, const UserId& user) {
  auto ids = deps.store->groups_of(user);
  if (!ids.ok()) return error_of(ref, ids.error(), "GROUPS of " + user.str());
  std::vector<GroupListing> out;
  for (const auto& g : *ids) {
    auto meta = deps.store->meta(g);
    if (!meta.ok()) return error_of(ref, meta.error(), "GROUPS of " + user.str());
    auto me = deps.store->member(g, user);
    if (!me.ok()) return error_of(ref, me.error(), "GROUPS of " + user.str());
    // The index and the rows are written in one change; a group read between two changes may differ by
    // one op: show what the member row says.
    if (!*meta || !*me || !(*me)->current()) continue;
    out.push_back(GroupListing{**meta, (*me)->role});
  }
  return encode_groups_list(ref, out);
}

std::string list_members(const GroupRequestDeps& deps, const std::string& ref, const UserId& user,
                         const GroupId& group) {
  GroupCheck check = check_group_member(*deps.store, group, user);
  if (!check.member) return encode_error(ref, check.code, check.message);
  auto state = deps.store->load(group);
  if (!state.ok()) return error_of(ref, state.error(), "GROUP_MEMBERS of g:" + group.str());
  if (!*state) return encode_error(ref, WireCode::kUnknownGroup, "there is no group 'g:" + group.str() + "'");
  std::vector<GroupMemberRecord> current;
  for (const auto& [u, m] : (*state)->members()) {
    if (m.current()) current.push_back(m);
  }
  return encode_group_members(ref, *(*state)->meta(), current);
}

}  // namespace

WireCode wire_code_of(GroupRefusal refusal) {
  switch (refusal) {
    case GroupRefusal::kUnknownGroup:
      return WireCode::kUnknownGroup;
    case GroupRefusal::kNotMember:
      return WireCode::kNotAMember;
    case GroupRefusal::kNotAllowed:
      return WireCode::kNotAllowed;
    case GroupRefusal::kFull:
      return WireCode::kGroupFull;
    case GroupRefusal::kInvalid:
    case GroupRefusal::kNone:
      break;
  }
  return WireCode::kInvalidArgument;
}

GroupCheck check_group_member(GroupStore& store, const GroupId& group, const UserId& user) {
  GroupCheck out;
  auto member = store.member(group, user);
  if (!member.ok()) {
    out.code = wire_code_of(member.code());
    out.message = member.error().message();
    return out;
  }
  if (*member && (*member)->current()) {
    out.member = **member;
    return out;
  }
  auto meta = store.meta(group);
  if (!meta.ok()) {
    out.code = wire_code_of(meta.code());
    out.message = meta.error().message();
  } else if (!*meta) {
    out.code = WireCode::kUnknownGroup;
    out.message = "there is no group 'g:" + group.str() + "'";
  } else {
    out.code = WireCode::kNotAMember;
    out.message = "you are not a member of group 'g:" + group.str() + "'";
  }
  return out;
}

GroupId mint_group_id() {
  std::random_device rd;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 4; ++i) {
    const uint32_t r = rd();
    for (int k = 0; k < 8; ++k) id.push_back(kHex[(r >> (4 * k)) & 0xf]);
  }
  return GroupId::unchecked(std::move(id));
}

namespace {

// What the check of `op` by `actor` needs of the group, read row by row: the meta row, the actor's member
// row, and the rows of the users the op names only where its rule depends on them (an admin's remove: their
// roles; a role change: its target; an add that may go over the limit: who is a member already). Fanout
// keeps the whole state; the gateway never loads it (its outcomes grow with every op ever made).
Result<GroupState> state_for_check(GroupStore& store, const GroupId& group, const GroupOp& op,
                                   const UserId& actor, uint32_t max_members) {
  QIM_ASSIGN_OR_RETURN(auto meta, store.meta(group));
  if (!meta) return GroupState(group);
  std::vector<GroupMemberRecord> rows;
  QIM_ASSIGN_OR_RETURN(auto me, store.member(group, actor));
  if (!me || !me->current()) return GroupState(*meta, {}, {});  // refused: not a member
  const GroupRole role = me->role;
  rows.push_back(std::move(*me));
  std::vector<UserId> targets;
  switch (op.kind) {
    case GroupOpKind::kAdd:
      // Counting every named user as new can only overstate the count: read their rows only if that
      // overstated count is over the limit.
      if (meta->member_count + op.members.size() > max_members) targets = op.members;
      break;
    case GroupOpKind::kRemove:
      // The owner removes anyone but itself (its own row is read); an admin may not remove an admin.
      if (role != GroupRole::kOwner) targets = op.members;
      break;
    case GroupOpKind::kSetRole:
      targets = op.members;
      break;
    case GroupOpKind::kCreate:
    case GroupOpKind::kLeave:
    case GroupOpKind::kRename:
      break;
  }
  for (const auto& u : targets) {
    if (u == actor || std::any_of(rows.begin(), rows.end(), [&](const auto& r) { return r.user == u; }))
      continue;
    QIM_ASSIGN_OR_RETURN(auto row, store.member(group, u));
    if (row) rows.push_back(std::move(*row));
  }
  return GroupState(*meta, std::move(rows), {});
}

}  // namespace

GroupPlan plan_group_frame(const GroupRequestDeps& deps, const std::string& ref, const Principal& who,
                           const GroupFrame& f) {
  GroupPlan plan;
  if (f.request == GroupRequest::kList) {
    plan.answer = list_groups(deps, ref, who.user);
    return plan;
  }
  if (f.request == GroupRequest::kMembers) {
    plan.answer = list_members(deps, ref, who.user, f.group);
    return plan;
  }

  GroupOp op{op_kind_of(f.request), f.members, f.name, f.role};
  if (deps.users != nullptr && (f.request == GroupRequest::kCreate || f.request == GroupRequest::kAdd)) {
    for (const UserId& u : f.members) {
      if (!deps.users->exists(u)) {
        plan.answer =
            encode_error(ref, WireCode::kUnknownUser, "no user '" + u.str() + "' in the user registry");
        return plan;
      }
    }
  }
  if (deps.privacy != nullptr && !f.members.empty() &&
      (f.request == GroupRequest::kCreate || f.request == GroupRequest::kAdd)) {
    // Nobody is put in a group by a user they block (docs/adr/0096).
    auto blockers = Privacy(*deps.privacy).blocked_by(who.user);
    if (!blockers.ok()) {
      plan.answer = error_of(ref, blockers.error(), "block check of " + who.user.str());
      return plan;
    }
    for (const UserId& u : f.members) {
      if (blockers->contains(u)) {
        plan.answer =
            encode_error(ref, WireCode::kBlocked, "'" + u.str() + "' does not accept you in groups");
        return plan;
      }
    }
  }
  const GroupId group = f.request == GroupRequest::kCreate ? mint_group_id() : f.group;
  if (f.request != GroupRequest::kCreate) {
    // The same rules fanout applies, on what the rule needs of the current state: refused here, nothing
    // is appended.
    auto state = state_for_check(*deps.store, group, op, who.user, deps.max_members);
    if (!state.ok()) {
      plan.answer = error_of(ref, state.error(), "group check of g:" + group.str());
      return plan;
    }
    GroupChange change = state->apply(op, who.user, kOpenInterval - 1, deps.max_members);
    if (!change.outcome.applied) {
      plan.answer = encode_error(ref, wire_code_of(change.outcome.refusal), change.outcome.reason);
      return plan;
    }
  } else if (f.members.size() + 1 > deps.max_members) {
    plan.answer = encode_error(ref, WireCode::kGroupFull,
                               "a group has at most " + std::to_string(deps.max_members) + " members");
    return plan;
  }

  OutboxRecord record;
  record.conversation = Conversation::group(group).value().id();
  record.sender = who.user;
  record.sender_device = who.device;
  record.client_msg_id = "~group:" + std::string(group_op_name(op.kind));
  record.server_time_ms = deps.clock->now_ms();
  record.body = group_op_body(op, who.user);
  record.group_op = op;
  plan.partition = outbox_partition_of(record.conversation, deps.outbox->partition_count());
  plan.record = std::move(record);
  plan.group = group;
  plan.kind = op.kind;
  return plan;
}

std::optional<std::string> group_outcome_answer(GroupStore& store, const std::string& ref,
                                                const GroupPlan& plan, Offset offset) {
  auto outcome = store.outcome(plan.group, offset.value);
  if (!outcome.ok()) return error_of(ref, outcome.error(), "group outcome of g:" + plan.group.str());
  if (!*outcome) return std::nullopt;
  if (!(*outcome)->applied) return encode_error(ref, wire_code_of((*outcome)->refusal), (*outcome)->reason);
  return encode_group_ok(ref, group_op_name(plan.kind), plan.group, message_id_of(plan.partition, offset));
}

std::string group_append_failed(const std::string& ref, const Error& error) {
  return encode_error(ref, wire_code_of(error.code()), "the group change was not stored: " + error.message());
}

std::string group_not_applied(const std::string& ref) {
  return encode_error(ref, WireCode::kUnavailable,
                      "the group change was appended but fanout has not applied it yet; it will be decided "
                      "there (read GROUP_MEMBERS rather than repeating it)");
}

}  // namespace qim
