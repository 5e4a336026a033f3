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

}  // namespace qim
