// The server API's session routes (docs/api.md "Sessions"): the same SessionService `qim admin sessions`
// calls (src/sessions/session_service.h), so a revocation through either door is recorded, pushed to every
// gateway and closes the live connections alike (docs/adr/0099).
#include <boost/json.hpp>

#include "api/api_router.h"
#include "sessions/session_service.h"

namespace qim::api {

namespace json = boost::json;

namespace {

ApiResponse ok_json(std::string body) {
  ApiResponse r;
  r.status = 200;
  r.body = std::move(body);
  return r;
}

}  // namespace

ApiResponse ApiRouter::devices(const std::string& user_text) {
  if (deps_.sessions == nullptr) return problem(WireCode::kUnavailable, "sessions are not served here");
  auto user = UserId::parse(user_text);
  if (!user.ok()) return problem(WireCode::kInvalidArgument, "user: " + user.error().message());
  auto marks = deps_.sessions->marks(*user);
  if (!marks.ok()) return problem(wire_code_of(marks.code()), marks.error().message());
  auto devices = deps_.sessions->devices(*user);
  if (!devices.ok()) return problem(wire_code_of(devices.code()), devices.error().message());
  return ok_json(devices_json(*user, *marks, *devices));
}

ApiResponse ApiRouter::revoke(const std::string& user_text, const std::optional<std::string>& device_text) {
  if (deps_.sessions == nullptr) return problem(WireCode::kUnavailable, "sessions are not served here");
  auto user = UserId::parse(user_text);
  if (!user.ok()) return problem(WireCode::kInvalidArgument, "user: " + user.error().message());
  std::optional<DeviceId> device;
  if (device_text) {
    auto d = DeviceId::parse(*device_text);
    if (!d.ok()) return problem(WireCode::kInvalidArgument, "device: " + d.error().message());
    device = *d;
  }
  auto not_before = deps_.sessions->revoke(*user, device);
  if (!not_before.ok()) return problem(wire_code_of(not_before.code()), not_before.error().message());
  json::object out;
  out["user"] = user_text;
  if (device_text) out["device"] = *device_text;
  out["not_before"] = *not_before;
  return ok_json(json::serialize(out));
}

}  // namespace qim::api
