#pragma once
// Where qimctl connects: a `ws://host[:port][/path]` URL parsed into what qim::client::Client takes.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace qim::ctl {

struct Endpoint {
  std::string host;          // an IP address ("localhost" is read as 127.0.0.1)
  uint16_t port = 80;        // ws:// default when the URL names none
  std::string target = "/";  // the HTTP path of the upgrade request
};

// InvalidArgument naming the problem for anything but a ws:// URL with an IP host (or localhost) and a
// port in 1..65535. wss:// is refused: the client library speaks plain WebSocket only.
Result<Endpoint> parse_ws_url(std::string_view url);

}  // namespace qim::ctl
