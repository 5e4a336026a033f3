#pragma once
// The admin HTTP server: GET /healthz, GET /metrics (Prometheus text format) and the routes a deployment
// registers (GatewayDeps::admin_routes). Bound to loopback unless configured otherwise; one request per
// connection, bounded in size and time.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "gateway/gateway.h"

namespace qim {

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
