#include "groups/group_codec.h"

#include "core/bytes.h"

namespace qim {

namespace {
constexpr uint8_t kVersion = 1;
// Intervals one member row may hold when read: a row with more is refused as corrupt rather than read
// without bound. The writer stops at kMaxMemberIntervals (groups/membership.h), below this, so it never
// writes a row this refuses.
constexpr uint32_t kMaxStoredIntervals = 1u << 16;
static_assert(kMaxMemberIntervals <= kMaxStoredIntervals,
              "the writer must stay within what the reader takes");
}  // namespace

std::string encode_group_meta(const GroupMeta& m) {
  ByteWriter w;
  w.u8(kVersion);
  w.str(m.group.str());
  w.str(m.name);
  w.str(m.owner.str());
  w.u64(m.created_at);
  w.u32(m.member_count);
  return w.take();
}

Result<GroupMeta> decode_group_meta(std::string_view bytes) {
  ByteReader r(bytes, "group meta row");
  QIM_ASSIGN_OR_RETURN(uint8_t version, r.u8("version"));
  if (version != kVersion) return r.corrupt("version", "unknown version " + std::to_string(version));
  GroupMeta m;
  QIM_ASSIGN_OR_RETURN(m.group, r.name<GroupId>("group"));
  QIM_ASSIGN_OR_RETURN(m.name, r.str("name", kMaxGroupNameBytes));
  QIM_ASSIGN_OR_RETURN(m.owner, r.name<UserId>("owner"));
  QIM_ASSIGN_OR_RETURN(m.created_at, r.u64("created_at"));
  QIM_ASSIGN_OR_RETURN(m.member_count, r.u32("member_count"));
  QIM_RETURN_IF_ERROR(r.finish());
  return m;
}

std::string encode_group_member(const GroupMemberRecord& m) {
  ByteWriter w;
  w.u8(kVersion);
  w.str(m.user.str());
  w.u8(static_cast<uint8_t>(m.role));
  w.u32(static_cast<uint32_t>(m.intervals.size()));
  for (const auto& i : m.intervals) {
    w.u64(i.joined_at);
    w.u64(i.left_at);
  }
  return w.take();
}

Result<GroupMemberRecord> decode_group_member(std::string_view bytes) {
  ByteReader r(bytes, "group member row");
  QIM_ASSIGN_OR_RETURN(uint8_t version, r.u8("version"));
  if (version != kVersion) return r.corrupt("version", "unknown version " + std::to_string(version));
  GroupMemberRecord m;
  QIM_ASSIGN_OR_RETURN(m.user, r.name<UserId>("user"));
  QIM_ASSIGN_OR_RETURN(uint8_t role, r.u8("role"));
  if (role > static_cast<uint8_t>(GroupRole::kOwner))
    return r.corrupt("role", "unknown role " + std::to_string(role));
  m.role = static_cast<GroupRole>(role);
  QIM_ASSIGN_OR_RETURN(uint32_t n, r.u32("intervals"));
  if (n == 0 || n > kMaxStoredIntervals)
    return r.corrupt("intervals", "count " + std::to_string(n) + " out of bounds");
  uint64_t after = 0;
  for (uint32_t k = 0; k < n; ++k) {
    MemberInterval i;
    QIM_ASSIGN_OR_RETURN(i.joined_at, r.u64("joined_at"));
    QIM_ASSIGN_OR_RETURN(i.left_at, r.u64("left_at"));
    // Intervals are disjoint and in order, and only the last may be open: else "member at o" is ambiguous.
    if (i.left_at < i.joined_at || (k > 0 && i.joined_at <= after) ||
        (k + 1 < n && i.left_at == kOpenInterval)) {
      return r.corrupt("intervals", "interval " + std::to_string(k) + " out of order");
    }
    after = i.left_at;
    m.intervals.push_back(i);
  }
  QIM_RETURN_IF_ERROR(r.finish());
  return m;
}

std::string encode_group_outcome(const GroupOpOutcome& o) {
  ByteWriter w;
  w.u8(kVersion);
  w.u8(o.applied ? 1 : 0);
  w.u8(static_cast<uint8_t>(o.refusal));
  w.str(o.reason);
  return w.take();
}

Result<GroupOpOutcome> decode_group_outcome(std::string_view bytes) {
  ByteReader r(bytes, "group op outcome row");
  QIM_ASSIGN_OR_RETURN(uint8_t version, r.u8("version"));
  if (version != kVersion) return r.corrupt("version", "unknown version " + std::to_string(version));
  GroupOpOutcome o;
  QIM_ASSIGN_OR_RETURN(uint8_t applied, r.u8("applied"));
  if (applied > 1) return r.corrupt("applied", "not 0 or 1");
  o.applied = applied == 1;
  QIM_ASSIGN_OR_RETURN(uint8_t refusal, r.u8("refusal"));
  if (refusal > static_cast<uint8_t>(GroupRefusal::kInvalid)) return r.corrupt("refusal", "unknown refusal");
  o.refusal = static_cast<GroupRefusal>(refusal);
  if (o.applied != (o.refusal == GroupRefusal::kNone))
    return r.corrupt("refusal", "does not match 'applied'");
  QIM_ASSIGN_OR_RETURN(o.reason, r.str("reason", 4096));
  QIM_RETURN_IF_ERROR(r.finish());
  return o;
}

Error corrupt_group_row(const GroupId& group, std::string_view row, std::string_view why) {
  return Error(Errc::kCorruptEntry,
               "group store: group '" + group.str() + "' " + std::string(row) + ": " + std::string(why));
}

Result<GroupMeta> decode_meta_row(const GroupId& group, std::string_view bytes) {
  auto m = decode_group_meta(bytes);
  if (!m.ok()) return corrupt_group_row(group, "meta", m.error().message());
  if (m->group != group) return corrupt_group_row(group, "meta", "it names group '" + m->group.str() + "'");
  return m;
}

Result<GroupMemberRecord> decode_member_row(const GroupId& group, std::string_view user_key,
                                            std::string_view bytes) {
  const std::string row = "member " + std::string(user_key);
  auto m = decode_group_member(bytes);
  if (!m.ok()) return corrupt_group_row(group, row, m.error().message());
  if (m->user.str() != user_key)
    return corrupt_group_row(group, row, "it names user '" + m->user.str() + "'");
  return m;
}

Result<GroupOpOutcome> decode_outcome_row(const GroupId& group, uint64_t offset, std::string_view bytes) {
  auto o = decode_group_outcome(bytes);
  if (!o.ok()) return corrupt_group_row(group, "outcome at " + std::to_string(offset), o.error().message());
  return o;
}

}  // namespace qim
