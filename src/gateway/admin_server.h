#pragma once
// The admin HTTP server: GET /healthz, GET /metrics (Prometheus text format) and the routes a deployment
// registers (GatewayDeps::admin_routes). Bound to loopback unless configured otherwise; one request per
// connection, bounded in size and time. /healthz and /metrics are open; every registered route (they
// replay, or show message bodies) answers 403 unless the request carries the header kAdminHeader (any
// value) and a Host header that is an IP address or "localhost" with this server's port: no HTML form
// and no DNS-rebound page can send that (docs/adr/0059-dev-and-admin-surfaces.md).

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "gateway/gateway.h"

namespace qim {

// The header every admin route (not /healthz, /metrics) requires; qim's admin client sends "1".
inline constexpr const char* kAdminHeader = "X-QIM-Admin";

class AdminServer {
 public:
  AdminServer(boost::asio::io_context& io, std::function<std::string()> metrics_text,
              std::vector<AdminRoute> routes);

  // Io naming the address if it cannot be bound.
  Status listen(const std::string& address, uint16_t port);
  uint16_t port() const { return port_; }
  void close();

 private:
  void do_accept();

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::shared_ptr<const std::function<std::string()>> metrics_text_;
  std::shared_ptr<const std::vector<AdminRoute>> routes_;
  uint16_t port_ = 0;
};

// Binds an acceptor to address:port (0 picks a free port); Io naming what failed.
Status bind_acceptor(boost::asio::ip::tcp::acceptor& acceptor, const std::string& address, uint16_t port,
                     std::string_view what);

}  // namespace qim
