#include "gateway/protocol/wire_code.h"

namespace qim {

std::string_view wire_code_name(WireCode code) {
  switch (code) {
    case WireCode::kBadFrame:
      return "BAD_FRAME";
    case WireCode::kUnknownType:
      return "UNKNOWN_TYPE";
    case WireCode::kUnsupportedVersion:
      return "UNSUPPORTED_VERSION";
    case WireCode::kTooLarge:
      return "TOO_LARGE";
    case WireCode::kRateLimited:
      return "RATE_LIMITED";
    case WireCode::kUnauthenticated:
      return "UNAUTHENTICATED";
    case WireCode::kForbidden:
      return "FORBIDDEN";
    case WireCode::kExpiredCursor:
      return "EXPIRED_CURSOR";
    case WireCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case WireCode::kNotFound:
      return "NOT_FOUND";
    case WireCode::kUnavailable:
      return "UNAVAILABLE";
    case WireCode::kInternal:
      return "INTERNAL";
    case WireCode::kUnknownGroup:
      return "UNKNOWN_GROUP";
    case WireCode::kNotAMember:
      return "NOT_A_MEMBER";
    case WireCode::kNotAllowed:
      return "NOT_ALLOWED";
    case WireCode::kGroupFull:
      return "GROUP_FULL";
    case WireCode::kBlocked:
      return "BLOCKED";
    case WireCode::kUnknownMessage:
      return "UNKNOWN_MESSAGE";
    case WireCode::kWindowPassed:
      return "WINDOW_PASSED";
    case WireCode::kMessageRecalled:
      return "MESSAGE_RECALLED";
    case WireCode::kRejected:
      return "REJECTED";
    case WireCode::kUnknownUser:
      return "UNKNOWN_USER";
    case WireCode::kUserExists:
      return "USER_EXISTS";
    case WireCode::kBadReaction:
      return "BAD_REACTION";
    case WireCode::kReactionLimit:
      return "REACTION_LIMIT";
    case WireCode::kReactionUnchanged:
      return "REACTION_UNCHANGED";
    case WireCode::kAttachmentsDisabled:
      return "ATTACHMENTS_DISABLED";
    case WireCode::kUnsupportedType:
      return "UNSUPPORTED_TYPE";
    case WireCode::kQuotaExceeded:
      return "QUOTA_EXCEEDED";
    case WireCode::kAttachmentMissing:
      return "ATTACHMENT_MISSING";
    case WireCode::kAttachmentMismatch:
      return "ATTACHMENT_MISMATCH";
    case WireCode::kUnknownAttachment:
      return "UNKNOWN_ATTACHMENT";
    case WireCode::kUnknownProvider:
      return "UNKNOWN_PROVIDER";
    case WireCode::kBadPushToken:
      return "BAD_PUSH_TOKEN";
    case WireCode::kTooManyDevices:
      return "TOO_MANY_DEVICES";
  }
  return "INTERNAL";
}

WireCode wire_code_of(Errc code) {
  switch (code) {
    case Errc::kInvalidArgument:
      return WireCode::kInvalidArgument;
    case Errc::kUnauthenticated:
      return WireCode::kUnauthenticated;
    case Errc::kPermissionDenied:
      return WireCode::kForbidden;
    case Errc::kResourceExhausted:
      return WireCode::kRateLimited;
    case Errc::kExpiredCursor:
      return WireCode::kExpiredCursor;
    case Errc::kNotFound:
      return WireCode::kNotFound;
    // The store or log cannot answer correctly right now; the data is safe, the client retries later.
    case Errc::kTransport:
    case Errc::kTimeout:
    case Errc::kIo:
    case Errc::kProofMissing:
    case Errc::kEpochAhead:
      return WireCode::kUnavailable;
    case Errc::kInvariant:
    case Errc::kCorruptEntry:
    case Errc::kDispatchConflict:
    case Errc::kWatermarkGap:
    case Errc::kIncomplete:
    case Errc::kConfig:
      return WireCode::kInternal;
  }
  return WireCode::kInternal;
}

}  // namespace qim
