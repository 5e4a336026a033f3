#pragma once
// The push frames (docs/protocol.md "Push", docs/push.md): a device registers where it is woken when it has
// no live connection.
//   PUSH_REGISTER {provider: "fcm"|"apns"|"webpush", token}   -> PUSH_REGISTERED {provider}
//   PUSH_UNREGISTER {}                                        -> PUSH_UNREGISTERED {}
//   PUSH_CONFIG {}                                            -> PUSH_CONFIG {providers, vapid_public_key}
// The registration is the caller's device's (the token's device). Parsing checks the provider and the
// token's form (push/push_target.h): UNKNOWN_PROVIDER, BAD_PUSH_TOKEN; the registry's bound
// (TOO_MANY_DEVICES) is the answer's.
//
// The general parser (client_frame.h) does not know these types (UNKNOWN_TYPE); the connection asks this
// one for a frame it refused so, after AUTH. The push refusals' codes are WireCodes (protocol/wire_code.h),
// counted by the gateway's error counters as every other refusal.

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "gateway/protocol/wire_code.h"
#include "push/push_registry.h"
#include "push/push_target.h"

namespace qim {

struct PushRegisterFrame {
  PushProvider provider = PushProvider::kWebPush;
  std::string token;
};
struct PushUnregisterFrame {};
struct PushConfigFrame {};
using PushFrame = std::variant<PushRegisterFrame, PushUnregisterFrame, PushConfigFrame>;

struct PushFrameError {
  WireCode code = WireCode::kInvalidArgument;  // UNKNOWN_PROVIDER, BAD_PUSH_TOKEN, INVALID_ARGUMENT
  std::string message;
};
using PushRequest = std::variant<PushFrame, PushFrameError>;

// nullopt unless `text` is a JSON object whose "type" is a push frame's; then the frame or its refusal.
std::optional<PushRequest> parse_push_request(std::string_view text);

std::string encode_push_registered(std::string_view ref, PushProvider provider);
std::string encode_push_unregistered(std::string_view ref);
std::string encode_push_config(std::string_view ref, const PushDoor& door);
// {"type":"ERROR","ref","code","message"}.
std::string encode_push_error(std::string_view ref, WireCode code, std::string_view message);

}  // namespace qim
