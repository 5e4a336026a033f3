#include "gateway/group_requests.h"

#include <spdlog/spdlog.h>

#include <future>
#include <random>
#include <thread>

#include "gateway/protocol/server_frame.h"
#include "outbox/outbox_record.h"

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

std::string answer_group_frame(const GroupRequestDeps& deps, const std::string& ref, const Principal& who,
                               const GroupFrame& f) {
  if (f.request == GroupRequest::kList) return list_groups(deps, ref, who.user);
  if (f.request == GroupRequest::kMembers) return list_members(deps, ref, who.user, f.group);

  GroupOp op{op_kind_of(f.request), f.members, f.name, f.role};
  const GroupId group = f.request == GroupRequest::kCreate ? mint_group_id() : f.group;
  if (f.request != GroupRequest::kCreate) {
    // The same rules fanout applies, on a copy of the current state: refused here, nothing is appended.
    auto state = deps.store->load(group);
    if (!state.ok()) return error_of(ref, state.error(), "group check of g:" + group.str());
    GroupState probe = *state ? **state : GroupState(group);
    GroupChange change = probe.apply(op, who.user, kOpenInterval - 1, deps.max_members);
    if (!change.outcome.applied)
      return encode_error(ref, wire_code_of(change.outcome.refusal), change.outcome.reason);
  } else if (f.members.size() + 1 > deps.max_members) {
    return encode_error(ref, WireCode::kGroupFull,
                        "a group has at most " + std::to_string(deps.max_members) + " members");
  }

  OutboxRecord record;
  record.conversation = Conversation::group(group).value().id();
  record.sender = who.user;
  record.sender_device = who.device;
  record.client_msg_id = "~group:" + std::string(group_op_name(op.kind));
  record.server_time_ms = deps.clock->now_ms();
  record.body = group_op_body(op, who.user);
  record.group_op = op;
  const uint32_t partition = outbox_partition_of(record.conversation, deps.outbox->partition_count());
  std::promise<Result<Offset>> appended;
  auto done = appended.get_future();
  deps.outbox->append(partition, record.conversation.str(), encode_outbox_record(record),
                      [&appended](Result<Offset> r) { appended.set_value(std::move(r)); });
  Result<Offset> offset = done.get();
  if (!offset.ok()) {
    return encode_error(ref, wire_code_of(offset.code()),
                        "the group change was not stored: " + offset.error().message());
  }
  // Fanout decides at the offset; wait for its outcome so the next frame of any client sees it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(deps.apply_wait_ms);
  auto pause = std::chrono::milliseconds(2);
  while (true) {
    auto outcome = deps.store->outcome(group, offset->value);
    if (!outcome.ok()) return error_of(ref, outcome.error(), "group outcome of g:" + group.str());
    if (*outcome) {
      if (!(*outcome)->applied)
        return encode_error(ref, wire_code_of((*outcome)->refusal), (*outcome)->reason);
      return encode_group_ok(ref, group_op_name(op.kind), group, message_id_of(partition, *offset));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return encode_error(
          ref, WireCode::kUnavailable,
          "the group change was appended but fanout has not applied it yet; it will be decided "
          "there (read GROUP_MEMBERS rather than repeating it)");
    }
    std::this_thread::sleep_for(pause);  // polling the store: fanout gives no signal to the gateway
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

}  // namespace qim
