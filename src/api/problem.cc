#include "api/problem.h"

#include <boost/json.hpp>

namespace qim::api {

unsigned http_status_of(WireCode code) {
  switch (code) {
    case WireCode::kUnauthenticated:
      return 401;
    case WireCode::kForbidden:
    case WireCode::kNotAMember:
    case WireCode::kNotAllowed:
    case WireCode::kBlocked:
      return 403;
    case WireCode::kNotFound:
    case WireCode::kUnknownGroup:
    case WireCode::kUnknownType:
    case WireCode::kUnknownMessage:
      return 404;
    case WireCode::kGroupFull:
    case WireCode::kExpiredCursor:
    case WireCode::kWindowPassed:
    case WireCode::kMessageRecalled:
      return 409;
    case WireCode::kTooLarge:
      return 413;
    case WireCode::kRateLimited:
      return 429;
    case WireCode::kUnavailable:
      return 503;
    case WireCode::kInternal:
      return 500;
    case WireCode::kBadFrame:
    case WireCode::kUnsupportedVersion:
    case WireCode::kInvalidArgument:
      break;
  }
  return 400;
}

std::string_view problem_title(WireCode code) {
  switch (code) {
    case WireCode::kBadFrame:
      return "The request body is not a JSON object";
    case WireCode::kUnknownType:
      return "Unknown request type";
    case WireCode::kUnsupportedVersion:
      return "Unsupported version";
    case WireCode::kTooLarge:
      return "The request or a field of it is too large";
    case WireCode::kRateLimited:
      return "Too many requests for this API key";
    case WireCode::kUnauthenticated:
      return "The API key is missing, unknown or revoked";
    case WireCode::kForbidden:
      return "Not allowed";
    case WireCode::kExpiredCursor:
      return "The cursor is below the trim";
    case WireCode::kInvalidArgument:
      return "A field is missing, of the wrong type or out of range";
    case WireCode::kNotFound:
      return "Not found";
    case WireCode::kUnavailable:
      return "A dependency did not answer; retry later";
    case WireCode::kInternal:
      return "Internal error";
    case WireCode::kUnknownGroup:
      return "No such group";
    case WireCode::kNotAMember:
      return "Not a member of the group";
    case WireCode::kNotAllowed:
      return "The actor's role does not allow this";
    case WireCode::kGroupFull:
      return "The group is full";
    case WireCode::kBlocked:
      return "The recipient blocks the sender";
    case WireCode::kUnknownMessage:
      return "No such message in that conversation";
    case WireCode::kWindowPassed:
      return "The message is past its edit or recall window";
    case WireCode::kMessageRecalled:
      return "The message was recalled";
  }
  return "Error";
}

std::string problem_json(WireCode code, std::string_view detail, unsigned status) {
  const std::string_view name = wire_code_name(code);
  boost::json::object o;
  o["type"] = "urn:qim:problem:" + std::string(name);
  o["title"] = problem_title(code);
  o["status"] = status != 0 ? status : http_status_of(code);
  o["detail"] = detail;
  o["code"] = name;
  return boost::json::serialize(o);
}

}  // namespace qim::api
