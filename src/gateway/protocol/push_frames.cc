#include "gateway/protocol/push_frames.h"

#include <simdjson.h>

#include "gateway/protocol/json_writer.h"

namespace qim {

namespace {

JsonWriter start(std::string_view type, std::string_view ref) {
  JsonWriter w;
  w.reserve(128).begin_object().field("type", type);
  if (!ref.empty()) w.field("ref", ref);
  return w;
}

}  // namespace

std::optional<PushRequest> parse_push_request(std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::dom::object o;
  std::string_view type;
  if (parser.parse(text.data(), text.size()).get(doc) != simdjson::SUCCESS ||
      doc.get_object().get(o) != simdjson::SUCCESS || o["type"].get_string().get(type) != simdjson::SUCCESS)
    return std::nullopt;
  if (type == "PUSH_UNREGISTER") return PushRequest{PushFrame{PushUnregisterFrame{}}};
  if (type == "PUSH_CONFIG") return PushRequest{PushFrame{PushConfigFrame{}}};
  if (type != "PUSH_REGISTER") return std::nullopt;
  std::string_view provider, token;
  if (o["provider"].get_string().get(provider) != simdjson::SUCCESS)
    return PushRequest{PushFrameError{WireCode::kInvalidArgument, "field 'provider' (a string) is required"}};
  auto p = parse_push_provider(provider);
  if (!p)
    return PushRequest{PushFrameError{
        WireCode::kUnknownProvider,
        "provider '" + std::string(provider.substr(0, 32)) + "': expected fcm, apns or webpush"}};
  if (o["token"].get_string().get(token) != simdjson::SUCCESS)
    return PushRequest{PushFrameError{WireCode::kInvalidArgument, "field 'token' (a string) is required"}};
  if (Status s = check_push_token(*p, token); !s.ok())
    return PushRequest{PushFrameError{WireCode::kBadPushToken, s.error().message()}};
  return PushRequest{PushFrame{PushRegisterFrame{*p, std::string(token)}}};
}

std::string encode_push_registered(std::string_view ref, PushProvider provider) {
  return start("PUSH_REGISTERED", ref).field("provider", push_provider_name(provider)).end_object().take();
}

std::string encode_push_unregistered(std::string_view ref) {
  return start("PUSH_UNREGISTERED", ref).end_object().take();
}

std::string encode_push_config(std::string_view ref, const PushDoor& door) {
  JsonWriter w = start("PUSH_CONFIG", ref);
  w.key("providers").begin_array();
  for (PushProvider p : door.providers) w.string(push_provider_name(p));
  w.end_array().key("vapid_public_key");
  if (door.vapid_public_key.empty()) {
    w.null();
  } else {
    w.string(door.vapid_public_key);
  }
  return w.end_object().take();
}

std::string encode_push_error(std::string_view ref, WireCode code, std::string_view message) {
  return start("ERROR", ref)
      .field("code", wire_code_name(code))
      .field("message", message)
      .end_object()
      .take();
}

}  // namespace qim
