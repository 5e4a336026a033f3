#include "push/push_registry.h"

#include <charconv>

namespace qim {

namespace {

UserId owner(const UserId& user) {
  return UserId::unchecked("~push~" + user.str());
}

UserId door_owner() {
  return UserId::unchecked("~pushconfig~");
}

}  // namespace

Status publish_push_door(InboxBackend& backend, const PushDoor& door, int64_t version) {
  std::string providers;
  for (PushProvider p : door.providers) {
    if (!providers.empty()) providers += ",";
    providers += push_provider_name(p);
  }
  QIM_RETURN_IF_ERROR(backend.put_setting(door_owner(), "vapid_public_key", door.vapid_public_key, version));
  return backend.put_setting(door_owner(), "providers", providers, version);
}

Result<PushDoor> read_push_door(InboxBackend& backend) {
  QIM_ASSIGN_OR_RETURN(auto cells, backend.settings(door_owner()));
  PushDoor door;
  if (auto it = cells.find("vapid_public_key"); it != cells.end()) door.vapid_public_key = it->second;
  if (auto it = cells.find("providers"); it != cells.end()) {
    std::string_view rest = it->second;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      if (auto p = parse_push_provider(rest.substr(0, comma))) door.providers.push_back(*p);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  return door;
}

std::string encode_push_cell(const PushTarget& t) {
  return std::string(push_provider_name(t.provider)) + " " + std::to_string(t.registered_ms) + " " + t.token;
}

std::optional<PushTarget> decode_push_cell(std::string_view value) {
  const size_t a = value.find(' ');
  if (a == std::string_view::npos) return std::nullopt;
  const size_t b = value.find(' ', a + 1);
  if (b == std::string_view::npos) return std::nullopt;
  auto provider = parse_push_provider(value.substr(0, a));
  if (!provider) return std::nullopt;
  PushTarget t;
  t.provider = *provider;
  const std::string_view ms = value.substr(a + 1, b - a - 1);
  auto [end, ec] = std::from_chars(ms.data(), ms.data() + ms.size(), t.registered_ms);
  if (ec != std::errc() || end != ms.data() + ms.size()) return std::nullopt;
  t.token = std::string(value.substr(b + 1));
  if (t.token.empty()) return std::nullopt;
  return t;
}

Status PushRegistry::register_device(const UserId& user, const DeviceId& device, PushProvider provider,
                                     const std::string& token, int64_t version) {
  QIM_RETURN_IF_ERROR(check_push_token(provider, token));
  QIM_ASSIGN_OR_RETURN(auto current, devices(user));
  current.erase(device);
  if (current.size() >= kMaxPushDevices)
    return Error(Errc::kResourceExhausted, "user " + user.str() + " already has " +
                                               std::to_string(kMaxPushDevices) +
                                               " devices registered for push (PUSH_UNREGISTER one first)");
  return backend_.put_setting(owner(user), device.str(), encode_push_cell({provider, token, version}),
                              version);
}

Status PushRegistry::unregister_device(const UserId& user, const DeviceId& device, int64_t version) {
  return backend_.put_setting(owner(user), device.str(), "", version);
}

Status PushRegistry::drop_rejected(const UserId& user, const DeviceId& device, const PushTarget& target) {
  return backend_.put_setting(owner(user), device.str(), "", target.registered_ms + 1);
}

Result<std::map<DeviceId, PushTarget>> PushRegistry::devices(const UserId& user) {
  QIM_ASSIGN_OR_RETURN(auto cells, backend_.settings(owner(user)));
  std::map<DeviceId, PushTarget> out;
  for (const auto& [device, value] : cells) {
    if (auto t = decode_push_cell(value)) out.emplace(DeviceId::unchecked(device), std::move(*t));
  }
  return out;
}

}  // namespace qim
