#include "sessions/revocation.h"

#include <charconv>

namespace qim {

namespace {

constexpr std::string_view kPrefix = "{\"type\":\"~SESSION_REVOKED\"";

// Names hold no '"' or '\\' (core/name.h), so they go into JSON as they are.
std::optional<std::string_view> field(std::string_view frame, std::string_view key) {
  const std::string needle = "\"" + std::string(key) + "\":";
  const size_t at = frame.find(needle);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = frame.substr(at + needle.size());
  if (rest.starts_with("\"")) {
    const size_t end = rest.find('"', 1);
    if (end == std::string_view::npos) return std::nullopt;
    return rest.substr(1, end - 1);
  }
  const size_t end = rest.find_first_of(",}");
  if (end == std::string_view::npos) return std::nullopt;
  return rest.substr(0, end);
}

}  // namespace

int64_t RevocationMarks::not_before(const DeviceId& device) const {
  int64_t nb = user_not_before_ms;
  if (auto it = device_not_before_ms.find(device.str()); it != device_not_before_ms.end())
    nb = std::max(nb, it->second);
  return nb;
}

void RevocationMarks::raise(const std::optional<DeviceId>& device, int64_t not_before_ms) {
  int64_t& mark = device ? device_not_before_ms[device->str()] : user_not_before_ms;
  mark = std::max(mark, not_before_ms);
}

bool is_revoked(const RevocationMarks& marks, const DeviceId& device, int64_t issued_at_ms) {
  return issued_at_ms < marks.not_before(device);
}

std::string encode_revocation_signal(const UserId& user, const std::optional<DeviceId>& device,
                                     int64_t not_before_ms) {
  std::string out(kPrefix);
  out += ",\"user\":\"" + user.str() + "\",\"device\":";
  out += device ? "\"" + device->str() + "\"" : std::string("null");
  out += ",\"not_before\":" + std::to_string(not_before_ms) + "}";
  return out;
}

bool is_revocation_signal(std::string_view frame) {
  return frame.starts_with(kPrefix);
}

Result<RevocationSignal> decode_revocation_signal(std::string_view frame) {
  auto bad = [&] { return Error(Errc::kInvalidArgument, "not a revocation signal: " + std::string(frame)); };
  if (!is_revocation_signal(frame)) return bad();
  auto user_text = field(frame, "user");
  auto device_text = field(frame, "device");
  auto nb_text = field(frame, "not_before");
  if (!user_text || !device_text || !nb_text) return bad();
  auto user = UserId::parse(*user_text);
  if (!user.ok()) return bad();
  int64_t nb = 0;
  auto [end, ec] = std::from_chars(nb_text->data(), nb_text->data() + nb_text->size(), nb);
  if (ec != std::errc() || end != nb_text->data() + nb_text->size() || nb < 0) return bad();
  std::optional<DeviceId> device;
  if (*device_text != "null") {
    auto d = DeviceId::parse(*device_text);
    if (!d.ok()) return bad();
    device = std::move(d).value();
  }
  RevocationSignal s{std::move(user).value(), {}};
  s.marks.raise(device, nb);
  return s;
}

}  // namespace qim
