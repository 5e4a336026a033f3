#pragma once
// The bytes of the group store's rows, the same in every backend (each stores them as opaque values):
// a version byte, then the fields. Decoders return CorruptEntry naming the row kind and the field.

#include <string>
#include <string_view>

#include "core/status.h"
#include "groups/membership.h"

namespace qim {

std::string encode_group_meta(const GroupMeta& meta);
Result<GroupMeta> decode_group_meta(std::string_view bytes);

std::string encode_group_member(const GroupMemberRecord& member);
Result<GroupMemberRecord> decode_group_member(std::string_view bytes);

std::string encode_group_outcome(const GroupOpOutcome& outcome);
Result<GroupOpOutcome> decode_group_outcome(std::string_view bytes);

// The rows as a backend reads them back: the decoders above, plus the check that the row names the group
// or user its key does. CorruptEntry "group store: group '<group>' <row>: <why>" otherwise, so every
// backend names the group and the row the same way.
Result<GroupMeta> decode_meta_row(const GroupId& group, std::string_view bytes);
Result<GroupMemberRecord> decode_member_row(const GroupId& group, std::string_view user_key,
                                            std::string_view bytes);
Result<GroupOpOutcome> decode_outcome_row(const GroupId& group, uint64_t offset, std::string_view bytes);
// CorruptEntry naming the group and row, for what a backend finds wrong beside the row's bytes.
Error corrupt_group_row(const GroupId& group, std::string_view row, std::string_view why);

}  // namespace qim
