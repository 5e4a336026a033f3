#include "delivery/redis/signal_payload.h"

#include "core/bytes.h"

namespace qim {

namespace {

constexpr uint8_t kMagic = 'R';
constexpr uint8_t kVersion = 1;
constexpr size_t kMinSignalBytes = 8 + 4 + 4;  // an except id, no user, an empty frame
constexpr size_t kMinUserBytes = 4;

}  // namespace

std::string encode_signal_payload(std::span<const Signal> signals) {
  ByteWriter w;
  w.u8(kMagic);
  w.u8(kVersion);
  w.u8(kRoutePayloadSignals);
  w.u32(static_cast<uint32_t>(signals.size()));
  for (const Signal& s : signals) {
    w.u64(s.except_connection);
    w.u32(static_cast<uint32_t>(s.users.size()));
    for (const UserId& u : s.users) w.str(u.str());
    w.str(s.frame);
  }
  return w.take();
}

bool is_signal_payload(std::string_view bytes) {
  return bytes.size() >= 3 && static_cast<uint8_t>(bytes[0]) == kMagic &&
         static_cast<uint8_t>(bytes[1]) == kVersion && static_cast<uint8_t>(bytes[2]) == kRoutePayloadSignals;
}

Result<std::vector<Signal>> decode_signal_payload(std::string_view bytes) {
  ByteReader r(bytes, "signal payload");
  QIM_ASSIGN_OR_RETURN(uint8_t magic, r.u8("magic"));
  if (magic != kMagic) return r.corrupt("magic", "not a route payload");
  QIM_ASSIGN_OR_RETURN(uint8_t version, r.u8("version"));
  if (version != kVersion) return r.corrupt("version", "version " + std::to_string(version) + " is not 1");
  QIM_ASSIGN_OR_RETURN(uint8_t kind, r.u8("kind"));
  if (kind != kRoutePayloadSignals) return r.corrupt("kind", "kind " + std::to_string(kind) + " is not 2");
  QIM_ASSIGN_OR_RETURN(uint32_t count, r.u32("signal count"));
  if (count > bytes.size() / kMinSignalBytes) return r.corrupt("signal count", "more signals than bytes");
  std::vector<Signal> out;
  out.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    Signal s;
    QIM_ASSIGN_OR_RETURN(s.except_connection, r.u64("except connection"));
    QIM_ASSIGN_OR_RETURN(uint32_t users, r.u32("user count"));
    if (users > bytes.size() / kMinUserBytes) return r.corrupt("user count", "more users than bytes");
    s.users.reserve(users);
    for (uint32_t k = 0; k < users; ++k) {
      QIM_ASSIGN_OR_RETURN(UserId u, r.name<UserId>("user"));
      s.users.push_back(std::move(u));
    }
    QIM_ASSIGN_OR_RETURN(s.frame, r.str("frame", kMaxSignalFrameBytes));
    out.push_back(std::move(s));
  }
  QIM_RETURN_IF_ERROR(r.finish());
  return out;
}

}  // namespace qim
