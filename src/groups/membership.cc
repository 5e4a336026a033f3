#include "groups/membership.h"

#include <algorithm>
#include <set>

namespace qim {

std::string_view group_op_name(GroupOpKind kind) {
  switch (kind) {
    case GroupOpKind::kCreate:
      return "create";
    case GroupOpKind::kAdd:
      return "add";
    case GroupOpKind::kRemove:
      return "remove";
    case GroupOpKind::kLeave:
      return "leave";
    case GroupOpKind::kRename:
      return "rename";
    case GroupOpKind::kSetRole:
      return "set_role";
  }
  return "unknown";
}

std::string_view group_role_name(GroupRole role) {
  switch (role) {
    case GroupRole::kMember:
      return "member";
    case GroupRole::kAdmin:
      return "admin";
    case GroupRole::kOwner:
      return "owner";
  }
  return "unknown";
}

bool GroupMemberRecord::member_at(uint64_t offset) const {
  return std::any_of(intervals.begin(), intervals.end(),
                     [&](const MemberInterval& i) { return i.joined_at <= offset && offset <= i.left_at; });
}

std::optional<uint64_t> GroupMemberRecord::joined_at() const {
  if (!current()) return std::nullopt;
  return intervals.back().joined_at;
}

GroupState::GroupState(GroupMeta meta, std::vector<GroupMemberRecord> members,
                       std::map<uint64_t, GroupOpOutcome> ops)
    : group_(meta.group), meta_(std::move(meta)), ops_(std::move(ops)) {
  for (auto& m : members) {
    UserId user = m.user;
    members_.emplace(std::move(user), std::move(m));
  }
}

const GroupMemberRecord* GroupState::member(const UserId& user) const {
  auto it = members_.find(user);
  return it == members_.end() ? nullptr : &it->second;
}

const GroupOpOutcome* GroupState::outcome_at(uint64_t offset) const {
  auto it = ops_.find(offset);
  return it == ops_.end() ? nullptr : &it->second;
}

std::vector<UserId> GroupState::members_at(uint64_t offset) const {
  std::vector<UserId> out;
  for (const auto& [user, record] : members_) {
    if (record.member_at(offset)) out.push_back(user);
  }
  return out;  // sorted: members_ is ordered by user
}

bool GroupState::member_at(const UserId& user, uint64_t offset) const {
  const GroupMemberRecord* m = member(user);
  return m != nullptr && m->member_at(offset);
}

namespace {

GroupOpOutcome refused(GroupRefusal why, std::string reason) {
  return GroupOpOutcome{false, why, std::move(reason)};
}

// The distinct users of `users`, in order of first appearance.
std::vector<UserId> distinct(const std::vector<UserId>& users) {
  std::set<UserId> seen;
  std::vector<UserId> out;
  for (const auto& u : users) {
    if (seen.insert(u).second) out.push_back(u);
  }
  return out;
}

}  // namespace

GroupOpOutcome GroupState::decide(const GroupOp& op, const UserId& actor, uint32_t max_members) const {
  const std::string g = "group 'g:" + group_.str() + "'";
  if (op.kind == GroupOpKind::kCreate) {
    if (exists()) return refused(GroupRefusal::kInvalid, g + " exists already");
    std::vector<UserId> all = distinct(op.members);
    if (std::find(all.begin(), all.end(), actor) == all.end()) all.push_back(actor);
    if (all.size() > max_members) {
      return refused(GroupRefusal::kFull, g + " would have " + std::to_string(all.size()) +
                                              " members, over the limit of " + std::to_string(max_members));
    }
    return GroupOpOutcome{true, GroupRefusal::kNone, {}};
  }
  if (!exists()) return refused(GroupRefusal::kUnknownGroup, "there is no " + g);
  const GroupMemberRecord* me = member(actor);
  if (me == nullptr || !me->current()) {
    return refused(GroupRefusal::kNotMember, actor.str() + " is not a member of " + g);
  }
  const GroupRole role = me->role;
  switch (op.kind) {
    case GroupOpKind::kCreate:
      break;
    case GroupOpKind::kAdd: {
      if (role < GroupRole::kAdmin)
        return refused(GroupRefusal::kNotAllowed, "only an admin or the owner adds members");
      size_t added = 0;
      for (const auto& u : distinct(op.members)) {
        const GroupMemberRecord* m = member(u);
        if (m != nullptr && m->current()) continue;
        ++added;
        // One more interval than the reader takes would make the group unloadable, for good.
        if (m != nullptr && m->intervals.size() >= kMaxMemberIntervals) {
          return refused(GroupRefusal::kFull, u.str() + " has joined " + g + " " +
                                                  std::to_string(m->intervals.size()) +
                                                  " times, the most one member may");
        }
      }
      if (meta_->member_count + added > max_members) {
        return refused(GroupRefusal::kFull, g + " would have " + std::to_string(meta_->member_count + added) +
                                                " members, over the limit of " + std::to_string(max_members));
      }
      break;
    }
    case GroupOpKind::kRemove:
      if (role < GroupRole::kAdmin)
        return refused(GroupRefusal::kNotAllowed, "only an admin or the owner removes members");
      for (const auto& u : op.members) {
        const GroupMemberRecord* m = member(u);
        if (m == nullptr || !m->current()) continue;  // not a member: nothing to remove
        if (m->role == GroupRole::kOwner)
          return refused(GroupRefusal::kNotAllowed, "the owner cannot be removed");
        if (m->role == GroupRole::kAdmin && role != GroupRole::kOwner && u != actor) {
          return refused(GroupRefusal::kNotAllowed, "only the owner removes an admin (" + u.str() + ")");
        }
      }
      break;
    case GroupOpKind::kLeave:
      if (role == GroupRole::kOwner) return refused(GroupRefusal::kNotAllowed, "the owner cannot leave " + g);
      break;
    case GroupOpKind::kRename:
      if (role < GroupRole::kAdmin)
        return refused(GroupRefusal::kNotAllowed, "only an admin or the owner renames");
      break;
    case GroupOpKind::kSetRole: {
      if (role != GroupRole::kOwner) return refused(GroupRefusal::kNotAllowed, "only the owner sets roles");
      if (op.members.size() != 1) return refused(GroupRefusal::kInvalid, "set_role names exactly one member");
      if (op.role == GroupRole::kOwner)
        return refused(GroupRefusal::kInvalid, "the owner role cannot be given");
      const GroupMemberRecord* m = member(op.members[0]);
      if (m == nullptr || !m->current()) {
        return refused(GroupRefusal::kNotMember, op.members[0].str() + " is not a member of " + g);
      }
      if (m->role == GroupRole::kOwner)
        return refused(GroupRefusal::kNotAllowed, "the owner's role cannot change");
      break;
    }
  }
  return GroupOpOutcome{true, GroupRefusal::kNone, {}};
}

GroupChange GroupState::apply(const GroupOp& op, const UserId& actor, uint64_t offset, uint32_t max_members) {
  GroupChange change;
  change.group = group_;
  change.offset = offset;
  if (const GroupOpOutcome* seen = outcome_at(offset)) {  // a replay: decided before
    change.outcome = *seen;
    return change;
  }
  change.outcome = decide(op, actor, max_members);
  ops_[offset] = change.outcome;
  if (!change.outcome.applied) return change;

  auto join = [&](const UserId& u, GroupRole role) {
    GroupMemberRecord& m = members_[u];
    if (m.current()) return;
    m.user = u;
    m.role = role;
    m.intervals.push_back(MemberInterval{offset, kOpenInterval});
    ++meta_->member_count;
    change.members.push_back(m);
    change.joined.push_back(u);
  };
  auto leave = [&](const UserId& u) {
    auto it = members_.find(u);
    if (it == members_.end() || !it->second.current()) return;
    it->second.intervals.back().left_at = offset;
    --meta_->member_count;
    change.members.push_back(it->second);
    change.left.push_back(u);
  };
  switch (op.kind) {
    case GroupOpKind::kCreate:
      meta_ = GroupMeta{group_, op.name, actor, offset, 0};
      join(actor, GroupRole::kOwner);
      for (const auto& u : distinct(op.members)) join(u, GroupRole::kMember);
      break;
    case GroupOpKind::kAdd:
      for (const auto& u : distinct(op.members)) join(u, GroupRole::kMember);
      break;
    case GroupOpKind::kRemove:
      for (const auto& u : distinct(op.members)) leave(u);
      break;
    case GroupOpKind::kLeave:
      leave(actor);
      break;
    case GroupOpKind::kRename:
      meta_->name = op.name;
      break;
    case GroupOpKind::kSetRole: {
      GroupMemberRecord& m = members_[op.members[0]];
      m.role = op.role;
      change.members.push_back(m);
      break;
    }
  }
  change.meta = meta_;
  return change;
}

namespace {

void json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[(c >> 4) & 0xf];
      out += kHex[c & 0xf];
      continue;
    }
    out += c;
  }
  out += '"';
}

// For people: the first few names, then how many more (the body's "members" lists them all).
std::string joined_names(const std::vector<UserId>& users) {
  constexpr size_t kShown = 5;
  std::string out;
  for (size_t i = 0; i < users.size() && i < kShown; ++i) out += (i ? ", " : "") + users[i].str();
  if (users.size() > kShown) out += " and " + std::to_string(users.size() - kShown) + " others";
  return out;
}

}  // namespace

std::string group_op_body(const GroupOp& op, const UserId& actor) {
  std::string text;
  switch (op.kind) {
    case GroupOpKind::kCreate:
      text = actor.str() + " created the group '" + op.name + "'" +
             (op.members.empty() ? "" : " with " + joined_names(op.members));
      break;
    case GroupOpKind::kAdd:
      text = actor.str() + " added " + joined_names(op.members);
      break;
    case GroupOpKind::kRemove:
      text = actor.str() + " removed " + joined_names(op.members);
      break;
    case GroupOpKind::kLeave:
      text = actor.str() + " left";
      break;
    case GroupOpKind::kRename:
      text = actor.str() + " renamed the group to '" + op.name + "'";
      break;
    case GroupOpKind::kSetRole:
      text = actor.str() + " made " + joined_names(op.members) + " " + std::string(group_role_name(op.role));
      break;
  }
  std::string out = "{\"group_op\":";
  json_string(out, group_op_name(op.kind));
  out += ",\"by\":";
  json_string(out, actor.str());
  // Every member's mailbox holds this body: a 500-user add to a 10,000-member group must not write 500
  // names 10,000 times. The first kListed are named, "count" says how many there are (GROUP_MEMBERS has
  // them all).
  constexpr size_t kListed = 20;
  out += ",\"members\":[";
  for (size_t i = 0; i < op.members.size() && i < kListed; ++i) {
    if (i) out += ',';
    json_string(out, op.members[i].str());
  }
  out += ']';
  if (op.members.size() > kListed) out += ",\"count\":" + std::to_string(op.members.size());
  if (op.kind == GroupOpKind::kCreate || op.kind == GroupOpKind::kRename) {
    out += ",\"name\":";
    json_string(out, op.name);
  }
  if (op.kind == GroupOpKind::kSetRole) {
    out += ",\"role\":";
    json_string(out, group_role_name(op.role));
  }
  out += ",\"text\":";
  json_string(out, text);
  out += '}';
  return out;
}

}  // namespace qim
