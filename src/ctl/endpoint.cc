#include "ctl/endpoint.h"

#include <charconv>

namespace qim::ctl {

namespace {
Error bad_url(std::string_view url, const std::string& why) {
  return Error(Errc::kInvalidArgument, "url '" + std::string(url) + "': " + why);
}
}  // namespace

Result<Endpoint> parse_ws_url(std::string_view url) {
  Endpoint e;
  e.tls = url.starts_with("wss://");
  if (!e.tls && !url.starts_with("ws://")) return bad_url(url, "must start with ws:// or wss://");
  if (e.tls) e.port = 443;
  std::string_view rest = url.substr(e.tls ? 6 : 5);
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    e.target = std::string(rest.substr(slash));
    rest = rest.substr(0, slash);
  }
  std::string_view host = rest;
  if (rest.starts_with('[')) {  // [v6]:port
    auto close = rest.find(']');
    if (close == std::string_view::npos) return bad_url(url, "unclosed '[' in the host");
    host = rest.substr(1, close - 1);
    rest = rest.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) return bad_url(url, "unexpected text after ']'");
  } else if (auto colon = rest.find(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    rest = rest.substr(colon);
  } else {
    rest = {};
  }
  if (host.empty()) return bad_url(url, "no host");
  e.host = host == "localhost" ? "127.0.0.1" : std::string(host);
  if (rest.starts_with(':')) {
    std::string_view digits = rest.substr(1);
    unsigned value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || value == 0 ||
        value > 65535)
      return bad_url(url, "port must be a number in 1..65535");
    e.port = static_cast<uint16_t>(value);
  }
  return e;
}

}  // namespace qim::ctl
