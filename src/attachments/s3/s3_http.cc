#include "attachments/s3/s3_http.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cctype>
#include <optional>

namespace qim::attachments::s3 {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

struct ParsedUrl {
  bool tls = false;
  std::string host;       // for the resolver and SNI
  std::string port;       // "80" / "443" when the URL names none
  std::string authority;  // host[:port] as the URL spells it: the signed Host header
  std::string target;     // /path?query
};

std::optional<ParsedUrl> parse_url(std::string_view url) {
  ParsedUrl p;
  if (url.starts_with("http://")) {
    url.remove_prefix(7);
  } else if (url.starts_with("https://")) {
    url.remove_prefix(8);
    p.tls = true;
  } else {
    return std::nullopt;
  }
  auto slash = url.find('/');
  p.authority = std::string(url.substr(0, slash));
  p.target = slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
  if (p.authority.empty()) return std::nullopt;
  auto colon = p.authority.rfind(':');
  if (p.authority.front() == '[') {  // [IPv6]:port
    auto close = p.authority.find(']');
    if (close == std::string::npos) return std::nullopt;
    p.host = p.authority.substr(1, close - 1);
    colon = p.authority.size() > close + 1 && p.authority[close + 1] == ':' ? close + 1 : std::string::npos;
  } else {
    p.host = p.authority.substr(0, colon);
  }
  p.port = colon == std::string::npos ? (p.tls ? "443" : "80") : p.authority.substr(colon + 1);
  return p;
}

Error failure(const beast::error_code& ec, std::string_view step, const ParsedUrl& url) {
  std::string where = std::string(step) + " " + url.authority + ": " + ec.message();
  if (ec == beast::error::timeout) return Error(Errc::kTimeout, where);
  if (ec == http::error::body_limit) return Error(Errc::kResourceExhausted, where);
  return Error(Errc::kTransport, where);
}

template <typename Stream>
Result<HttpResponse> exchange(Stream& stream, const HttpRequest& request, const ParsedUrl& url) {
  http::request<http::string_body> req;
  req.method_string(request.method);
  req.target(url.target);
  req.version(11);
  req.set(http::field::host, url.authority);
  req.set(http::field::connection, "close");
  for (const auto& [name, value] : request.headers) req.set(name, value);
  if (!request.body.empty() || request.method == "PUT") {
    req.body() = std::string(request.body);
    req.prepare_payload();  // Content-Length, the signed value the caller also set
  }
  beast::error_code ec;
  http::write(stream, req, ec);
  if (ec) return failure(ec, "sending to", url);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(request.max_body);
  if (request.method == "HEAD") parser.skip(true);
  http::read(stream, buffer, parser, ec);
  if (ec) return failure(ec, "reading the answer of", url);
  auto& res = parser.get();
  HttpResponse out;
  out.status = res.result_int();
  for (const auto& field : res) {
    std::string name(field.name_string());
    for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    out.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  out.body = std::move(res.body());
  return out;
}

}  // namespace

const std::string* HttpResponse::header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return &value;
  }
  return nullptr;
}

HttpClient::HttpClient(std::chrono::milliseconds timeout)
    : timeout_(timeout), tls_(asio::ssl::context::tls_client) {
  tls_.set_default_verify_paths();
  tls_.set_verify_mode(asio::ssl::verify_peer);
}

Result<HttpResponse> HttpClient::send(const HttpRequest& request) {
  auto url = parse_url(request.url);
  if (!url) return Error(Errc::kInvalidArgument, "not an http(s) URL: " + std::string(request.url));
  asio::io_context io;
  asio::ip::tcp::resolver resolver(io);
  beast::tcp_stream tcp(io);
  // One deadline for the whole exchange: tcp_stream applies it to every operation until it is reset.
  tcp.expires_after(timeout_);
  beast::error_code ec;
  auto endpoints = resolver.resolve(url->host, url->port, ec);
  if (ec) return failure(ec, "resolving", *url);
  tcp.connect(endpoints, ec);
  if (ec) return failure(ec, "connecting to", *url);
  if (!url->tls) return exchange(tcp, request, *url);

  beast::ssl_stream<beast::tcp_stream> tls(std::move(tcp), tls_);
  if (!SSL_set_tlsext_host_name(tls.native_handle(), url->host.c_str())) {
    return Error(Errc::kTransport, "TLS: cannot set the server name " + url->host);
  }
  tls.set_verify_callback(asio::ssl::host_name_verification(url->host));
  tls.handshake(asio::ssl::stream_base::client, ec);
  if (ec) return failure(ec, "TLS handshake with", *url);
  return exchange(tls, request, *url);
}

}  // namespace qim::attachments::s3
