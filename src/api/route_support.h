#pragma once
// What the server API's route files share (api_router.cc and the *_routes.cc beside it): a request body as
// JSON, the protocol's frame made of it and parsed by the protocol's parser, and the answer frame turned
// into the HTTP answer. Stateless; thread-safe.

#include <boost/json.hpp>

#include <string>
#include <string_view>
#include <variant>

#include "api/api_router.h"
#include "core/ids.h"
#include "gateway/protocol/client_frame.h"

namespace qim::api {

namespace json = boost::json;

// The ref of the frames the API makes (stripped from the answers).
inline constexpr std::string_view kRef = "api";

// A JSON answer with `status`.
ApiResponse json_response(unsigned status, std::string body);

// An answer frame of the protocol as the HTTP answer: ERROR becomes a problem with its code; any other
// frame is the body without its "ref", with `ok_status`. INTERNAL when the frame does not parse.
ApiResponse from_frame(const std::string& frame, unsigned ok_status = 200);

// The request body as a JSON object, or the problem: BAD_FRAME when it is not one.
std::variant<json::object, ApiResponse> body_object(const std::string& body);

// Parses `frame` with the protocol's parser: the typed frame, or the problem of its refusal (the frame's
// own code: INVALID_ARGUMENT naming the field, TOO_LARGE for a body over `max_body_bytes`, ...).
std::variant<ClientFrame, ApiResponse> parse_frame(const json::object& frame, size_t max_body_bytes);

// A user id field of the API; the problem INVALID_ARGUMENT naming `field` when it is not one.
std::variant<UserId, ApiResponse> user_field(const std::string& text, std::string_view field);

// Who acts in a request: its "from" field (a user id string), else `system_user`; the problem
// INVALID_ARGUMENT naming "from" otherwise. Every route that acts as a user names it so.
std::variant<UserId, ApiResponse> acting_user(const json::object& in, const std::string& system_user);

// Copies `name` from `from` into `to` if present.
void copy_field(const json::object& from, json::object& to, std::string_view name);

}  // namespace qim::api
