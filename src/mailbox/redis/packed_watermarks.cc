#include "mailbox/redis/packed_watermarks.h"

#include "core/bytes.h"

namespace qim {

PackedWatermarks PackedWatermarks::uniform(MailboxSeq w) {
  PackedWatermarks out;
  out.lanes.fill(w);
  out.epoch = w.epoch();
  return out;
}

std::string encode_packed_lanes(const std::array<MailboxSeq, kLanes>& lanes) {
  ByteWriter out;  // ByteWriter writes little-endian on the little-endian hosts we build for
  for (const MailboxSeq& w : lanes) out.u64(w.raw());
  return out.take();
}

std::string encode_packed_watermarks(const PackedWatermarks& w) {
  std::string out = encode_packed_lanes(w.lanes);
  ByteWriter epoch;
  epoch.u32(w.epoch.value);
  return out + epoch.bytes();
}

Result<PackedWatermarks> decode_packed_watermarks(std::string_view bytes) {
  ByteReader r(bytes, "packed watermarks");
  if (bytes.size() != kPackedWatermarksBytes) {
    return r.corrupt(
        "size", std::to_string(bytes.size()) + " bytes, expected " + std::to_string(kPackedWatermarksBytes));
  }
  PackedWatermarks out;
  for (auto& lane : out.lanes) {
    QIM_ASSIGN_OR_RETURN(uint64_t raw, r.u64("lane"));
    lane = MailboxSeq::from_raw(raw);
  }
  QIM_ASSIGN_OR_RETURN(out.epoch.value, r.u32("epoch"));
  QIM_RETURN_IF_ERROR(r.finish());
  return out;
}

Result<MailboxSeq> frontier_of(const PackedWatermarks& w) {
  for (uint32_t l = 1; l < kLanes; ++l) {
    if (w.lanes[l] != w.lanes[0]) {
      return Error(Errc::kCorruptEntry, "packed watermarks: lane " + std::to_string(l) + " holds " +
                                            w.lanes[l].to_string() + " but lane 0 holds " +
                                            w.lanes[0].to_string() + " (independent lanes are not built)");
    }
  }
  if (w.lanes[0].epoch() != w.epoch) {
    return Error(Errc::kCorruptEntry, "packed watermarks: W " + w.lanes[0].to_string() +
                                          " is not of the recorded epoch " + std::to_string(w.epoch.value));
  }
  return w.lanes[0];
}

}  // namespace qim
