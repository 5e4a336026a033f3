#include "app/admin_client.h"

#include "gateway/admin_server.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace qim {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

Result<std::string> admin_request(uint16_t port, const std::string& method, const std::string& target) {
  net::io_context io;
  beast::tcp_stream stream(io);
  stream.expires_after(std::chrono::seconds(10));
  beast::error_code ec;
  stream.connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), port), ec);
  if (ec) {
    return Error(Errc::kTransport,
                 "cannot reach the admin server on 127.0.0.1:" + std::to_string(port) + ": " + ec.message());
  }
  http::request<http::string_body> req(http::string_to_verb(method), target, 11);
  // The admin routes answer only requests with the admin header and an address (not a name) in Host
  // (gateway/admin_server.h).
  req.set(http::field::host, "127.0.0.1:" + std::to_string(port));
  req.set(kAdminHeader, "1");
  req.prepare_payload();
  http::write(stream, req, ec);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  if (!ec) http::read(stream, buffer, res, ec);
  if (ec)
    return Error(Errc::kTransport, "admin request " + method + " " + target + " failed: " + ec.message());
  const unsigned status = res.result_int();
  if (status >= 500)
    return Error(Errc::kTransport, "admin server answered " + std::to_string(status) + ": " + res.body());
  if (status >= 400) return Error(Errc::kInvalidArgument, res.body());
  return res.body();
}

}  // namespace qim
