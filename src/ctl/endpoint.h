#pragma once
// Where qimctl connects: a `ws://` or `wss://host[:port][/path]` URL parsed into what qim::client::Client
// takes.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace qim::ctl {

struct Endpoint {
  std::string host;          // an IP address ("localhost" is read as 127.0.0.1)
  uint16_t port = 80;        // when the URL names none: 80 for ws://, 443 for wss://
  bool tls = false;          // wss://
  std::string target = "/";  // the HTTP path of the upgrade request
};

// InvalidArgument naming the problem for anything but a ws:// or wss:// URL with an IP host (or
// localhost) and a port in 1..65535.
Result<Endpoint> parse_ws_url(std::string_view url);

}  // namespace qim::ctl
