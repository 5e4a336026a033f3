#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <optional>

#include "webhooks/hook_sender.h"

namespace qim {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

Result<HookUrl> parse_hook_url(const std::string& url, std::string_view variable) {
  auto bad = [&url, variable](const std::string& why) {
    return Error(Errc::kConfig, std::string(variable) + "='" + url + "': " + why);
  };
  constexpr std::string_view kScheme = "http://";
  if (url.starts_with("https://"))
    return bad("https is not supported yet; use http:// (e.g. to a local TLS proxy)");
  if (!url.starts_with(kScheme)) return bad("expected http://host[:port][/path]");
  std::string_view rest = std::string_view(url).substr(kScheme.size());
  HookUrl out;
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) out.target = std::string(rest.substr(slash));
  const size_t colon = authority.rfind(':');
  if (colon != std::string_view::npos && authority.find(']') == std::string_view::npos) {
    std::string_view port = authority.substr(colon + 1);
    unsigned value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535)
      return bad("bad port");
    out.port = static_cast<uint16_t>(value);
    authority = authority.substr(0, colon);
  }
  if (authority.empty()) return bad("no host");
  out.host = std::string(authority);
  return out;
}

namespace {

class HttpHookSender final : public HookSender {
 public:
  HttpHookSender(HookUrl url, std::chrono::milliseconds timeout) : url_(std::move(url)), timeout_(timeout) {}

  Status deliver(const SignedDelivery& d) override {
    Status s = attempt(d);
    // A kept-alive connection the hook closed while idle fails the first write: one fresh try.
    if (!s.ok() && reused_) s = attempt(d);
    return s;
  }

 private:
  Status attempt(const SignedDelivery& d) {
    beast::error_code ec;
    reused_ = stream_.has_value();
    if (!stream_) {
      stream_.emplace(io_);
      stream_->expires_after(timeout_);
      net::ip::tcp::resolver resolver(io_);
      auto endpoints = resolver.resolve(url_.host, std::to_string(url_.port), ec);
      if (!ec) stream_->connect(endpoints, ec);
      if (ec) return fail(Errc::kTransport, "cannot connect to the hook: " + ec.message());
    }
    stream_->expires_after(timeout_);
    http::request<http::string_body> req(http::verb::post, url_.target, 11);
    req.set(http::field::host, url_.host + ":" + std::to_string(url_.port));
    req.set(http::field::content_type, "application/json");
    req.set(http::field::user_agent, "qim-webhooks/1");
    req.set("webhook-id", d.id);
    req.set("webhook-timestamp", std::to_string(d.timestamp));
    req.set("webhook-signature", d.signature);
    req.keep_alive(true);
    req.body() = d.body;
    req.prepare_payload();
    http::write(*stream_, req, ec);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    if (!ec) http::read(*stream_, buffer, res, ec);
    if (ec) {
      return fail(ec == beast::error::timeout ? Errc::kTimeout : Errc::kTransport,
                  "the hook did not answer: " + ec.message());
    }
    reused_ = false;
    if (!res.keep_alive()) stream_.reset();
    const unsigned status = res.result_int();
    if (status < 200 || status > 299) {
      return Error(Errc::kTransport, "the hook answered " + std::to_string(status));
    }
    return {};
  }

  Status fail(Errc code, const std::string& what) {
    stream_.reset();
    return Error(code, what);
  }

  HookUrl url_;
  std::chrono::milliseconds timeout_;
  net::io_context io_;
  std::optional<beast::tcp_stream> stream_;
  bool reused_ = false;
};

}  // namespace

std::unique_ptr<HookSender> make_http_hook_sender(HookUrl url, std::chrono::milliseconds timeout) {
  return std::make_unique<HttpHookSender>(std::move(url), timeout);
}

}  // namespace qim
