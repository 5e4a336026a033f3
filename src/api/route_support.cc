// The helpers every route file of the server API shares (route_support.h).
#include "api/route_support.h"

#include "api/problem.h"

namespace qim::api {

ApiResponse json_response(unsigned status, std::string body) {
  ApiResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

ApiResponse from_frame(const std::string& frame, unsigned ok_status) {
  json::error_code ec;
  json::value v = json::parse(frame, ec);
  if (ec || !v.is_object())
    return ApiRouter::problem(WireCode::kInternal, "the answer frame did not parse (logged)");
  // Without "ref", in the frame's own order (object::erase would move the last member into its place).
  json::object o;
  for (const auto& [k, value] : v.as_object())
    if (k != "ref") o[k] = value;
  const json::value* type = o.if_contains("type");
  if (type != nullptr && type->is_string() && type->as_string() == "ERROR") {
    const json::value* code = o.if_contains("code");
    const json::value* message = o.if_contains("message");
    const std::string code_text = code != nullptr && code->is_string() ? std::string(code->as_string()) : "";
    WireCode wc = WireCode::kInternal;
    for (int c = 0; c <= static_cast<int>(kLastWireCode); ++c) {
      if (wire_code_name(static_cast<WireCode>(c)) == code_text) wc = static_cast<WireCode>(c);
    }
    return ApiRouter::problem(
        wc, message != nullptr && message->is_string() ? std::string(message->as_string()) : std::string());
  }
  return json_response(ok_status, json::serialize(o));
}

std::variant<json::object, ApiResponse> body_object(const std::string& body) {
  json::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec || !v.is_object())
    return ApiRouter::problem(WireCode::kBadFrame,
                              ec ? "the body is not JSON: " + ec.message() : "the body is not a JSON object");
  return std::move(v.as_object());
}

std::variant<ClientFrame, ApiResponse> parse_frame(const json::object& frame, size_t max_body_bytes) {
  FrameParser parser;
  auto parsed = parser.parse(json::serialize(frame), FrameLimits{max_body_bytes});
  if (auto* e = std::get_if<FrameError>(&parsed)) return ApiRouter::problem(e->code, e->message);
  return std::get<ClientFrame>(std::move(parsed));
}

std::variant<UserId, ApiResponse> user_field(const std::string& text, std::string_view field) {
  auto u = UserId::parse(text);
  if (!u.ok())
    return ApiRouter::problem(WireCode::kInvalidArgument,
                              "field '" + std::string(field) + "': " + u.error().message());
  return *u;
}

std::variant<UserId, ApiResponse> acting_user(const json::object& in, const std::string& system_user) {
  std::string from = system_user;
  if (const json::value* f = in.if_contains("from")) {
    if (!f->is_string())
      return ApiRouter::problem(WireCode::kInvalidArgument, "field 'from': expected a user id string");
    from = std::string(f->as_string());
  }
  return user_field(from, "from");
}

void copy_field(const json::object& from, json::object& to, std::string_view name) {
  if (const json::value* v = from.if_contains(name)) to[name] = *v;
}

}  // namespace qim::api
