#pragma once
// RFC 9457 problem details, the body of every refusal of the server API (docs/api.md "Errors"):
// {"type","title","status","detail","code"}, media type application/problem+json. `code` is the protocol's
// wire code (docs/protocol.md "Errors"), so a client matches the same strings behind both doors; `type` is
// "urn:qim:problem:<code>", `title` the code's fixed one-line meaning, `detail` what went wrong this time.

#include <string>
#include <string_view>

#include "gateway/protocol/wire_code.h"

namespace qim::api {

inline constexpr std::string_view kProblemMediaType = "application/problem+json";

// The HTTP status the API answers a wire code with (e.g. UNAUTHENTICATED 401, FORBIDDEN / NOT_A_MEMBER /
// NOT_ALLOWED 403, UNKNOWN_GROUP / NOT_FOUND 404, GROUP_FULL 409, TOO_LARGE 413, RATE_LIMITED 429,
// UNAVAILABLE 503, INTERNAL 500, the rest 400).
unsigned http_status_of(WireCode code);
// The fixed title of a code ("The API key is missing, unknown or revoked", ...).
std::string_view problem_title(WireCode code);
// The problem document of `code` with `detail`, answered with `status` (0: http_status_of(code)).
std::string problem_json(WireCode code, std::string_view detail, unsigned status = 0);

}  // namespace qim::api
