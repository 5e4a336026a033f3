#pragma once
// A one-shot HTTP request to a running instance's admin server on loopback (operator commands use it).

#include <cstdint>
#include <string>

#include "core/status.h"

namespace qim {

// The response body of `method target` on 127.0.0.1:port. Transport if the server cannot be reached;
// InvalidArgument carrying the body for a 4xx answer, Transport for a 5xx.
Result<std::string> admin_request(uint16_t port, const std::string& method, const std::string& target);

}  // namespace qim
