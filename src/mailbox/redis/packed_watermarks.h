#pragma once
// ADR-0015 "packed W v2": a shard's 64 lane watermarks as one Redis string, so one Lua call reads,
// checks and replaces all of them atomically. Layout (516 bytes):
//   bytes [8*l, 8*l+8)  lane l's W (a mailbox_seq), unsigned 64-bit little-endian, l = 0..63
//   bytes [512, 516)    the epoch of the owner that wrote it, unsigned 32-bit little-endian
// Today every lane holds the shard frontier (ADR-0022 section 1); M-1 will let them differ.

#include <array>
#include <string>
#include <string_view>

#include "core/mailbox_seq.h"
#include "core/sharding.h"
#include "core/status.h"

namespace qim {

inline constexpr size_t kPackedLanesBytes = 8 * kLanes;                  // the 64 lanes alone
inline constexpr size_t kPackedWatermarksBytes = kPackedLanesBytes + 4;  // lanes + epoch

struct PackedWatermarks {
  std::array<MailboxSeq, kLanes> lanes;
  Epoch epoch;

  // Every lane at `w`, written by the owner at w's epoch.
  static PackedWatermarks uniform(MailboxSeq w);
  bool operator==(const PackedWatermarks&) const = default;
};

std::string encode_packed_watermarks(const PackedWatermarks& w);
// The 512-byte lane part alone (what the frontier script compares with the stored lanes).
std::string encode_packed_lanes(const std::array<MailboxSeq, kLanes>& lanes);
// CorruptEntry naming the problem if the value is not 516 bytes.
Result<PackedWatermarks> decode_packed_watermarks(std::string_view bytes);

// The shard frontier a packed value stands for. CorruptEntry unless every lane is equal (no M-1 yet) and
// the lanes' epoch is the recorded one: the Redis counterpart of the CQL WRITETIME check.
Result<MailboxSeq> frontier_of(const PackedWatermarks& w);

}  // namespace qim
