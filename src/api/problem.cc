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
    case WireCode::kRejected:
      return 403;
    case WireCode::kNotFound:
    case WireCode::kUnknownGroup:
    case WireCode::kUnknownType:
    case WireCode::kUnknownMessage:
    case WireCode::kUnknownUser:
    case WireCode::kUnknownAttachment:
      return 404;
    case WireCode::kAttachmentsDisabled:
      return 501;
    case WireCode::kUnsupportedType:
      return 415;
    case WireCode::kAttachmentMissing:
    case WireCode::kAttachmentMismatch:
      return 422;
    case WireCode::kGroupFull:
    case WireCode::kTooManyDevices:
    case WireCode::kExpiredCursor:
    case WireCode::kWindowPassed:
    case WireCode::kMessageRecalled:
    case WireCode::kUserExists:
    case WireCode::kReactionLimit:
    case WireCode::kReactionUnchanged:
      return 409;
    case WireCode::kTooLarge:
      return 413;
    case WireCode::kQuotaExceeded:
    case WireCode::kRateLimited:
      return 429;
    case WireCode::kUnavailable:
      return 503;
    case WireCode::kInternal:
      return 500;
    case WireCode::kBadFrame:
    case WireCode::kUnsupportedVersion:
    case WireCode::kInvalidArgument:
    case WireCode::kBadReaction:
    case WireCode::kUnknownProvider:
    case WireCode::kBadPushToken:
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
    case WireCode::kRejected:
      return "The before-send hook rejected the message";
    case WireCode::kUnknownUser:
      return "No such user in the user registry";
    case WireCode::kUserExists:
      return "The user (or a look-alike id) exists";
    case WireCode::kBadReaction:
      return "Not one emoji nor a short code";
    case WireCode::kReactionLimit:
      return "Too many reactions on the message";
    case WireCode::kReactionUnchanged:
      return "The reaction is already as asked";
    case WireCode::kAttachmentsDisabled:
      return "Attachments are not configured on this deployment";
    case WireCode::kUnsupportedType:
      return "The content type is not allowed";
    case WireCode::kQuotaExceeded:
      return "Over the daily upload budget";
    case WireCode::kAttachmentMissing:
      return "The attachment was not uploaded by the sender to this conversation";
    case WireCode::kAttachmentMismatch:
      return "The uploaded object differs from its declaration";
    case WireCode::kUnknownAttachment:
      return "No such attachment visible to the caller";
    case WireCode::kUnknownProvider:
      return "Not a push provider (fcm, apns, webpush)";
    case WireCode::kBadPushToken:
      return "Not a token of its push provider's form";
    case WireCode::kTooManyDevices:
      return "Too many devices registered for push";
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
