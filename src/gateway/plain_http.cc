#include "gateway/plain_http.h"

#include <boost/asio/ip/address_v4.hpp>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "auth/token.h"
#include "core/ids.h"
#include "gateway/protocol/json_writer.h"

namespace qim {

namespace http = boost::beast::http;

namespace {

constexpr int64_t kDevTokenTtlMs = 24LL * 3600 * 1000;
constexpr std::string_view kWebSocketOnly = "this port speaks the QIM WebSocket protocol only\n";

PlainHttpAnswer text(http::status status, std::string body) {
  return PlainHttpAnswer{status, "text/plain; charset=utf-8", std::move(body), false};
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The value of `key` in a query string (percent escapes and '+' decoded), nullopt if absent or malformed.
std::optional<std::string> query_value(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) != key) continue;
    std::string_view raw = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    std::string out;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '+') {
        out.push_back(' ');
      } else if (raw[i] == '%') {
        if (i + 2 >= raw.size() || hex(raw[i + 1]) < 0 || hex(raw[i + 2]) < 0) return std::nullopt;
        out.push_back(static_cast<char>(hex(raw[i + 1]) * 16 + hex(raw[i + 2])));
        i += 2;
      } else {
        out.push_back(raw[i]);
      }
    }
    return out;
  }
  return std::nullopt;
}

// Whether `host` (a Host header: name or address, then an optional :port) names this machine's loopback
// at `port`: "localhost", an address of 127.0.0.0/8 or [::1]. A missing port is the scheme's default.
bool loopback_host(std::string_view host, uint16_t port, bool tls) {
  std::string_view name = host;
  std::string_view port_text;
  if (host.starts_with('[')) {
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    name = host.substr(0, close + 1);
    if (close + 1 < host.size()) {
      if (host[close + 1] != ':') return false;
      port_text = host.substr(close + 2);
    }
  } else if (const size_t colon = host.rfind(':'); colon != std::string_view::npos) {
    name = host.substr(0, colon);
    port_text = host.substr(colon + 1);
  }
  uint32_t asked = tls ? 443 : 80;
  if (!port_text.empty() || host.ends_with(':')) {
    asked = 0;
    if (port_text.empty() || port_text.size() > 5) return false;
    for (char c : port_text) {
      if (c < '0' || c > '9') return false;
      asked = asked * 10 + static_cast<uint32_t>(c - '0');
    }
  }
  if (asked != port) return false;
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "localhost" || lower == "[::1]") return true;
  boost::system::error_code ec;
  const auto v4 = boost::asio::ip::make_address_v4(lower, ec);
  return !ec && v4.is_loopback();
}

// A loopback peer is not enough: a proxy on this host, or a page whose DNS name was rebound to 127.0.0.1,
// connects from loopback too. The request must also name this loopback port in its Host header (a
// rebound name does not) and carry no forwarding header (a proxy's). Decision 59.
std::optional<std::string> dev_token_refusal(const http::request<http::empty_body>& request,
                                             const PlainHttpPeer& peer, bool tls) {
  if (!peer.loopback) return "development tokens are served to loopback clients only\n";
  for (std::string_view h : {"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Real-IP"}) {
    if (request.find(h) != request.end())
      return "development tokens are not served through a proxy (the request carries " + std::string(h) +
             ")\n";
  }
  const auto host = request.find(http::field::host);
  const std::string_view host_text = host == request.end()
                                         ? std::string_view()
                                         : std::string_view(host->value().data(), host->value().size());
  if (!loopback_host(host_text, peer.local_port, tls))
    return "development tokens are served only to a page on this machine's loopback at port " +
           std::to_string(peer.local_port) + " (Host: " + std::string(host_text) + ")\n";
  return std::nullopt;
}

PlainHttpAnswer dev_token(const http::request<http::empty_body>& request, std::string_view query,
                          const GatewayOptions& o, const PlainHttpPeer& peer, const Clock& clock) {
  if (auto why = dev_token_refusal(request, peer, !o.tls_cert_file.empty()))
    return text(http::status::forbidden, *why);
  auto user_text = query_value(query, "user");
  if (!user_text) return text(http::status::bad_request, "GET /dev/token?user=NAME[&device=NAME]\n");
  auto user = UserId::parse(*user_text);
  if (!user.ok()) return text(http::status::bad_request, "user: " + user.error().message() + "\n");
  auto device = DeviceId::parse(query_value(query, "device").value_or("web"));
  if (!device.ok()) return text(http::status::bad_request, "device: " + device.error().message() + "\n");
  auto token = mint_token(o.auth_secret, *user, *device, kDevTokenTtlMs, clock);
  if (!token.ok()) return text(http::status::internal_server_error, token.error().message() + "\n");
  JsonWriter w;
  w.begin_object();
  w.field("token", *token);
  w.field("user", user->str());
  w.field("device", device->str());
  w.field("expires_at", clock.now_ms() + kDevTokenTtlMs);
  w.end_object();
  return PlainHttpAnswer{http::status::ok, "application/json", w.take(), false};
}

std::string_view content_type_of(const std::filesystem::path& p) {
  const std::string ext = p.extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js" || ext == ".mjs") return "text/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".json" || ext == ".map") return "application/json";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  if (ext == ".ico") return "image/x-icon";
  return "application/octet-stream";
}

// Whether every segment of `path` (after the leading '/') is a plain name: no "..", no hidden files.
bool plain_path(std::string_view path) {
  if (path.empty() || path.front() != '/') return false;
  size_t start = 1;
  while (start <= path.size()) {
    const size_t slash = std::min(path.find('/', start), path.size());
    const std::string_view seg = path.substr(start, slash - start);
    if (seg.empty() || seg.front() == '.') return false;
    for (char c : seg) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
      if (!ok) return false;
    }
    start = slash + 1;
  }
  return true;
}

PlainHttpAnswer static_file(std::string_view path, const std::string& dir) {
  if (path == "/") path = "/index.html";
  if (!plain_path(path)) return text(http::status::not_found, "not found\n");
  const std::filesystem::path file = std::filesystem::path(dir) / std::string(path.substr(1));
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return text(http::status::not_found, "not found\n");
  std::ifstream in(file, std::ios::binary);
  std::ostringstream body;
  body << in.rdbuf();
  if (!in && !in.eof()) return text(http::status::internal_server_error, "cannot read the file\n");
  return PlainHttpAnswer{http::status::ok, std::string(content_type_of(file)), body.str(), true};
}

}  // namespace

PlainHttpAnswer answer_plain_http(const http::request<http::empty_body>& request,
                                  const GatewayOptions& options, const PlainHttpPeer& peer,
                                  const Clock& clock) {
  const std::string_view target(request.target().data(), request.target().size());
  const size_t q = target.find('?');
  const std::string_view path = target.substr(0, q);
  const std::string_view query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
  const bool get = request.method() == http::verb::get || request.method() == http::verb::head;
  if (options.dev_tokens && path == "/dev/token") {
    if (!get) return text(http::status::method_not_allowed, "GET only\n");
    return dev_token(request, query, options, peer, clock);
  }
  if (options.web_dir.empty()) return text(http::status::upgrade_required, std::string(kWebSocketOnly));
  if (!get) return text(http::status::method_not_allowed, "GET only\n");
  return static_file(path, options.web_dir);
}

}  // namespace qim
