#include "core/status.h"

namespace qim {

std::string_view errc_name(Errc code) {
  switch (code) {
    case Errc::kInvalidArgument:
      return "InvalidArgument";
    case Errc::kInvariant:
      return "Invariant";
    case Errc::kCorruptEntry:
      return "CorruptEntry";
    case Errc::kDispatchConflict:
      return "DispatchConflict";
    case Errc::kWatermarkGap:
      return "WatermarkGap";
    case Errc::kEpochAhead:
      return "EpochAhead";
    case Errc::kIncomplete:
      return "Incomplete";
    case Errc::kExpiredCursor:
      return "ExpiredCursor";
    case Errc::kProofMissing:
      return "ProofMissing";
    case Errc::kNotFound:
      return "NotFound";
    case Errc::kTransport:
      return "Transport";
    case Errc::kTimeout:
      return "Timeout";
    case Errc::kUnauthenticated:
      return "Unauthenticated";
    case Errc::kPermissionDenied:
      return "PermissionDenied";
    case Errc::kResourceExhausted:
      return "ResourceExhausted";
    case Errc::kIo:
      return "Io";
    case Errc::kConfig:
      return "Config";
  }
  return "Unknown";
}

std::string Error::to_string() const {
  std::string out(errc_name(code_));
  out += ": ";
  out += message_;
  return out;
}

}  // namespace qim
