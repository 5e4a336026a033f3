#pragma once
// What the client port answers to an HTTP request that is not a WebSocket upgrade: the web chat page's
// static files (QIM_WEB_DIR) and, in development only, GET /dev/token (QIM_WEB_DEV_TOKENS=1: a token route
// must never be open on a production port; docs/adr/0028-web-page-and-dev-tokens.md). /dev/token answers
// 403 unless the peer is on loopback, the Host header names a loopback address or "localhost" at the port
// the request came in on, and no forwarding header (Forwarded, X-Forwarded-For, X-Forwarded-Host,
// X-Real-IP) is present: a same-host proxy or a DNS-rebound page gets no token
// (docs/adr/0059-dev-and-admin-surfaces.md). Anything else keeps the old answer, 426 "this port speaks the
// QIM WebSocket protocol only".
//
// Pure apart from reading the file asked for: the connection writes the answer and closes. Thread-safe.

#include <boost/beast/http.hpp>

#include <string>

#include "core/clock.h"
#include "gateway/gateway.h"

namespace qim {

struct PlainHttpAnswer {
  boost::beast::http::status status = boost::beast::http::status::ok;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  bool cacheable = false;  // false: Cache-Control no-store (tokens, errors)
};

// Where the request came from, as the connection saw it.
struct PlainHttpPeer {
  bool loopback = false;    // the peer address is a loopback address (v4-mapped included)
  uint16_t local_port = 0;  // the port of this server the request came in on
};

// Only names of [A-Za-z0-9._-] segments below the web directory are served (no "..", no hidden files, no
// percent escapes): 404 otherwise, as for a file that is not there. "/" is index.html.
PlainHttpAnswer answer_plain_http(const boost::beast::http::request<boost::beast::http::empty_body>& request,
                                  const GatewayOptions& options, const PlainHttpPeer& peer,
                                  const Clock& clock);

}  // namespace qim
