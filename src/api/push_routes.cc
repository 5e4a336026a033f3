// The server API's push target routes (docs/api.md "Push targets", scope tokens; docs/adr/0150): list a
// user's registered devices, register or replace one device's target, clear it. The same registry the
// WebSocket's PUSH_REGISTER / PUSH_UNREGISTER write (push/push_registry.h, cells of the inbox's engine), with
// the same checks and refusal codes (the WireCodes UNKNOWN_PROVIDER, BAD_PUSH_TOKEN, TOO_MANY_DEVICES), so a
// backend can register a device for its user (e.g. a token its mobile app reported to it) without the
// device's socket.
#include <boost/json.hpp>

#include "api/api_router.h"
#include "api/problem.h"
#include "gateway/protocol/push_frames.h"
#include "push/push_registry.h"

namespace qim::api {

namespace json = boost::json;

namespace {

ApiResponse ok_json(const json::object& o) {
  ApiResponse r;
  r.status = 200;
  r.body = json::serialize(o);
  return r;
}

json::object target_json(const DeviceId& device, const PushTarget& t) {
  json::object o;
  o["device"] = device.str();
  o["provider"] = push_provider_name(t.provider);
  o["registered_at"] = t.registered_ms;  // the token is the device's credential: not listed
  return o;
}

}  // namespace

ApiResponse ApiRouter::push_targets(const ApiRequest& r, const std::vector<std::string>& parts) {
  if (deps_.inbox == nullptr)
    return problem(WireCode::kUnavailable, "push targets live beside the inbox, not served by this gateway");
  auto user = UserId::parse(parts[2]);
  if (!user.ok()) return problem(WireCode::kInvalidArgument, "user: " + user.error().message());
  PushRegistry registry(deps_.inbox->backend());
  if (parts.size() == 4) {  // GET: the registered devices
    auto devices = registry.devices(*user);
    if (!devices.ok()) return problem(wire_code_of(devices.code()), devices.error().message());
    json::array list;
    for (const auto& [device, target] : *devices) list.push_back(target_json(device, target));
    json::object out;
    out["user"] = user->str();
    out["targets"] = std::move(list);
    return ok_json(out);
  }
  auto device = DeviceId::parse(parts[4]);
  if (!device.ok()) return problem(WireCode::kInvalidArgument, "device: " + device.error().message());
  const int64_t now = deps_.inbox->backend().cell_version(deps_.clock->now_ms());
  if (r.method == "DELETE") {
    if (Status s = registry.unregister_device(*user, *device, now); !s.ok())
      return problem(wire_code_of(s.code()), s.error().message());
    json::object out;
    out["user"] = user->str();
    out["device"] = device->str();
    out["registered"] = false;
    return ok_json(out);
  }
  // PUT: {"provider", "token"}, as PUSH_REGISTER's fields.
  json::error_code ec;
  json::value v = json::parse(r.body, ec);
  if (ec || !v.is_object())
    return problem(WireCode::kBadFrame,
                   ec ? "the body is not JSON: " + ec.message() : "the body is not a JSON object");
  for (const auto& [k, value] : v.as_object()) {
    if (k != "provider" && k != "token")
      return problem(WireCode::kInvalidArgument, "unknown field '" + std::string(k) + "'");
    if (!value.is_string())
      return problem(WireCode::kInvalidArgument, "field '" + std::string(k) + "': expected a string");
  }
  const json::object& body = v.as_object();
  if (!body.contains("provider") || !body.contains("token"))
    return problem(WireCode::kInvalidArgument, "fields 'provider' and 'token' are required");
  const std::string provider_name(body.at("provider").as_string());
  auto provider = parse_push_provider(provider_name);
  if (!provider)
    return problem(WireCode::kUnknownProvider,
                   "provider '" + provider_name + "': expected fcm, apns or webpush");
  const std::string token(body.at("token").as_string());
  if (Status s = registry.register_device(*user, *device, *provider, token, now); !s.ok()) {
    if (s.code() == Errc::kInvalidArgument) return problem(WireCode::kBadPushToken, s.error().message());
    if (s.code() == Errc::kResourceExhausted) return problem(WireCode::kTooManyDevices, s.error().message());
    return problem(wire_code_of(s.code()), s.error().message());
  }
  return ok_json(target_json(*device, PushTarget{*provider, token, now}));
}

}  // namespace qim::api
