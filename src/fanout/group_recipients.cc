#include "fanout/group_recipients.h"

namespace qim {

uint64_t GroupRecipients::loads() const {
  std::lock_guard lock(mu_);
  return loads_;
}

Result<GroupState*> GroupRecipients::state_of(const GroupId& group) {
  if (auto it = cache_.find(group); it != cache_.end()) return &it->second;
  // Bounded by dropping everything: a dropped group costs one load when it is next read.
  if (cache_.size() >= cache_groups_) cache_.clear();
  ++loads_;
  QIM_ASSIGN_OR_RETURN(std::optional<GroupState> loaded, store_.load(group));
  auto [it, _] = cache_.emplace(group, loaded ? *std::move(loaded) : GroupState(group));
  return &it->second;
}

Result<bool> GroupRecipients::moderates(const GroupId& group, const UserId& user, uint64_t offset) {
  std::lock_guard lock(mu_);
  QIM_ASSIGN_OR_RETURN(GroupState * state, state_of(group));
  const GroupMemberRecord* m = state->member(user);
  return m != nullptr && m->member_at(offset) &&
         (m->role == GroupRole::kAdmin || m->role == GroupRole::kOwner);
}

Result<std::vector<UserId>> GroupRecipients::former_members(const GroupId& group,
                                                            std::span<const uint64_t> earlier, uint64_t now) {
  std::lock_guard lock(mu_);
  QIM_ASSIGN_OR_RETURN(GroupState * state, state_of(group));
  std::vector<UserId> out;
  for (const auto& [user, record] : state->members()) {  // a map: in name order
    if (record.member_at(now)) continue;
    for (uint64_t at : earlier) {
      if (record.member_at(at)) {
        out.push_back(user);
        break;
      }
    }
  }
  return out;
}

Result<GroupDecision> GroupRecipients::decide(const OutboxRecord& record, const GroupId& group,
                                              uint64_t offset) {
  std::lock_guard lock(mu_);
  QIM_ASSIGN_OR_RETURN(GroupState * state, state_of(group));
  GroupDecision d;
  if (record.group_op) {
    d.op = true;
    const bool decided_before = state->outcome_at(offset) != nullptr;
    GroupChange change = state->apply(*record.group_op, record.sender, offset, max_members_);
    if (!decided_before) {
      if (Status s = store_.apply(change); !s.ok()) {
        cache_.erase(group);  // the cached state holds a decision that is not durable: reload on retry
        return s.error();
      }
    }
    if (!change.outcome.applied) {
      d.skipped = "group op '" + std::string(group_op_name(record.group_op->kind)) + "' by " +
                  record.sender.str() + " refused: " + change.outcome.reason;
      return d;
    }
  } else if (!state->member_at(record.sender, offset)) {
    d.skipped = record.sender.str() + " is not a member of group 'g:" + group.str() + "' at this offset";
    return d;
  }
  d.recipients = state->members_at(offset);
  if (d.recipients.empty()) d.skipped = "group 'g:" + group.str() + "' has no members at this offset";
  return d;
}

}  // namespace qim
