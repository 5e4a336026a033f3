#include "gateway/push_requests.h"

#include <spdlog/spdlog.h>

#include "gateway/protocol/wire_code.h"

namespace qim {

namespace {

std::string refuse(GatewayMetrics* metrics, const std::string& ref, WireCode code, std::string_view message) {
  if (metrics != nullptr) metrics->errors(code).Increment();
  return encode_push_error(ref, code, message);
}

std::string failed(GatewayMetrics* metrics, const std::string& ref, std::string_view what,
                   const Error& error) {
  if (error.code() == Errc::kResourceExhausted)
    return refuse(metrics, ref, WireCode::kTooManyDevices, error.message());
  if (error.code() == Errc::kInvalidArgument)
    return refuse(metrics, ref, WireCode::kBadPushToken, error.message());
  const WireCode code = wire_code_of(error.code());
  if (code != WireCode::kInternal) return refuse(metrics, ref, code, error.message());
  spdlog::error("gateway: {} failed: {}", what, error.to_string());
  return refuse(metrics, ref, code, "the write failed on the server (logged)");
}

}  // namespace

std::string answer_push_request(InboxBackend& backend, const Clock& clock, const UserId& user,
                                const DeviceId& device, const std::string& ref, const PushRequest& request,
                                GatewayMetrics* metrics) {
  if (const auto* refused = std::get_if<PushFrameError>(&request))
    return refuse(metrics, ref, refused->code, refused->message);
  const PushFrame& frame = std::get<PushFrame>(request);
  PushRegistry registry(backend);
  const std::string what = "push registration of " + user.str() + "/" + device.str();
  if (const auto* f = std::get_if<PushRegisterFrame>(&frame)) {
    Status s =
        registry.register_device(user, device, f->provider, f->token, backend.cell_version(clock.now_ms()));
    if (!s.ok()) return failed(metrics, ref, what, s.error());
    return encode_push_registered(ref, f->provider);
  }
  if (std::holds_alternative<PushUnregisterFrame>(frame)) {
    Status s = registry.unregister_device(user, device, backend.cell_version(clock.now_ms()));
    if (!s.ok()) return failed(metrics, ref, what, s.error());
    return encode_push_unregistered(ref);
  }
  auto door = read_push_door(backend);
  if (!door.ok()) return failed(metrics, ref, "PUSH_CONFIG", door.error());
  return encode_push_config(ref, *door);
}

}  // namespace qim
