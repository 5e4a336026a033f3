#include "gateway/admin_server.h"

#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cctype>
#include <optional>

namespace qim {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

// Whether `host` (a Host header) is an IP address literal or "localhost", at `port`: any name but
// localhost may be a DNS name rebound to this machine.
bool admin_host(std::string_view host, uint16_t port) {
  std::string_view name = host;
  std::string_view port_text;
  if (host.starts_with('[')) {
    const size_t close = host.find(']');
    if (close == std::string_view::npos || close + 1 >= host.size() || host[close + 1] != ':') return false;
    name = host.substr(1, close - 1);
    port_text = host.substr(close + 2);
  } else {
    const size_t colon = host.rfind(':');
    if (colon == std::string_view::npos) return false;
    name = host.substr(0, colon);
    port_text = host.substr(colon + 1);
  }
  if (port_text != std::to_string(port)) return false;
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "localhost") return true;
  beast::error_code ec;
  (void)net::ip::make_address(lower, ec);
  return !ec;
}

class AdminSession : public std::enable_shared_from_this<AdminSession> {
 public:
  AdminSession(net::ip::tcp::socket socket, std::shared_ptr<const std::function<std::string()>> metrics,
               std::shared_ptr<const std::vector<AdminRoute>> routes)
      : stream_(std::move(socket)), metrics_(std::move(metrics)), routes_(std::move(routes)) {}

  void start() {
    parser_.header_limit(8 * 1024);
    parser_.body_limit(64 * 1024);
    stream_.expires_after(std::chrono::seconds(5));
    http::async_read(stream_, buffer_, parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

 private:
  void on_read(beast::error_code ec) {
    if (ec) return;
    const auto& req = parser_.get();
    std::string_view target(req.target().data(), req.target().size());
    auto q = target.find('?');
    std::string path(target.substr(0, q));
    std::string query(q == std::string_view::npos ? "" : target.substr(q + 1));
    std::string allow;
    AdminResponse out = route(req.method_string(), path, query, req.body(), allow);
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(out.status), 11);
    res->set(http::field::server, "qim-admin");
    if (!allow.empty()) res->set(http::field::allow, allow);
    res->set(http::field::content_type,
             path == "/metrics" ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8");
    res->keep_alive(false);
    res->body() = std::move(out.body);
    res->prepare_payload();
    http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code, size_t) {
      beast::error_code ignored;
      self->stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
    });
  }

  // The answer to one request. A known path asked with another method is 405 with `allow` set to the
  // methods it takes (RFC 9110 section 15.5.6), so a POST to a read-only route never looks like success.
  AdminResponse route(beast::string_view method, const std::string& path, const std::string& query,
                      const std::string& body, std::string& allow) {
    if (path == "/healthz" || path == "/metrics") {
      if (method != "GET") {
        allow = "GET";
        return {405, "method not allowed: " + path + " takes GET\n"};
      }
      return path == "/healthz" ? AdminResponse{200, "ok\n"} : AdminResponse{200, (*metrics_)()};
    }
    if (auto refused = refusal()) return {403, *refused};
    for (const auto& r : *routes_) {
      if (r.path != path) continue;
      if (method == r.method) return r.handler(query, body);
      if (allow.find(r.method) == std::string::npos) allow += (allow.empty() ? "" : ", ") + r.method;
    }
    if (!allow.empty()) return {405, "method not allowed: " + path + " takes " + allow + "\n"};
    return {404, "not found: " + path + "\n"};
  }

  // Every route but /healthz and /metrics changes something or shows message bodies: it answers only a
  // request that carries kAdminHeader (an HTML form cannot set a header, and a cross-origin script must
  // ask first with a preflight this server never grants) and whose Host is an IP address or localhost
  // at this server's port (a DNS-rebound page's Host is its own name). Decision 59.
  std::optional<std::string> refusal() const {
    const auto& req = parser_.get();
    if (req.find(kAdminHeader) == req.end())
      return std::string("the admin routes need the header ") + kAdminHeader +
             ": 1 (qim's admin client sends it; see docs/operations.md)\n";
    beast::error_code ec;
    const auto local = stream_.socket().local_endpoint(ec);
    const auto host = req.find(http::field::host);
    if (ec || host == req.end() ||
        !admin_host(std::string_view(host->value().data(), host->value().size()), local.port()))
      return "the admin routes answer only a Host that is an IP address or localhost at this port\n";
    return std::nullopt;
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request_parser<http::string_body> parser_;
  std::shared_ptr<const std::function<std::string()>> metrics_;
  std::shared_ptr<const std::vector<AdminRoute>> routes_;
};

}  // namespace

Status bind_acceptor(net::ip::tcp::acceptor& acceptor, const std::string& address, uint16_t port,
                     std::string_view what) {
  beast::error_code ec;
  auto ip = net::ip::make_address(address, ec);
  if (ec) return Error(Errc::kConfig, std::string(what) + " address '" + address + "' is not an IP address");
  net::ip::tcp::endpoint endpoint(ip, port);
  auto fail = [&](std::string_view step) {
    return Error(Errc::kIo, std::string(what) + " " + address + ":" + std::to_string(port) + ": " +
                                std::string(step) + ": " + ec.message());
  };
  if (acceptor.open(endpoint.protocol(), ec); ec) return fail("open");
  if (acceptor.set_option(net::socket_base::reuse_address(true), ec); ec) return fail("reuse_address");
  if (acceptor.bind(endpoint, ec); ec) return fail("bind");
  if (acceptor.listen(net::socket_base::max_listen_connections, ec); ec) return fail("listen");
  return {};
}

AdminServer::AdminServer(net::io_context& io, std::function<std::string()> metrics_text,
                         std::vector<AdminRoute> routes)
    : io_(io),
      acceptor_(net::make_strand(io)),
      metrics_text_(std::make_shared<const std::function<std::string()>>(std::move(metrics_text))),
      routes_(std::make_shared<const std::vector<AdminRoute>>(std::move(routes))) {}

Status AdminServer::listen(const std::string& address, uint16_t port) {
  QIM_RETURN_IF_ERROR(bind_acceptor(acceptor_, address, port, "admin"));
  port_ = acceptor_.local_endpoint().port();
  do_accept();
  return {};
}

void AdminServer::close() {
  net::post(acceptor_.get_executor(), [this] {
    beast::error_code ignored;
    acceptor_.close(ignored);
  });
}

void AdminServer::do_accept() {
  acceptor_.async_accept(net::make_strand(io_), [this](beast::error_code ec, net::ip::tcp::socket socket) {
    if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) std::make_shared<AdminSession>(std::move(socket), metrics_text_, routes_)->start();
    do_accept();
  });
}

}  // namespace qim
