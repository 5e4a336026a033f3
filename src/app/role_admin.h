#pragma once
// The admin HTTP server of a role process without a gateway (`qim fanout`, `qim mailbox`, `qim archiver`):
// the gateway's AdminServer (GET /healthz, GET /metrics and the pipeline's admin routes) on an io thread of
// its own, so every role process answers the same endpoints a gateway does. Bound to loopback by default
// (QIM_ADMIN_LISTEN / QIM_ADMIN_PORT).

#include <boost/asio/io_context.hpp>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "gateway/admin_server.h"

namespace qim {

class RoleAdmin {
 public:
  // `metrics_text` and the routes' handlers are called on the admin thread; they must be thread-safe
  // and outlive stop().
  RoleAdmin(std::function<std::string()> metrics_text, std::vector<AdminRoute> routes);
  ~RoleAdmin();  // stop()
  RoleAdmin(const RoleAdmin&) = delete;
  RoleAdmin& operator=(const RoleAdmin&) = delete;

  // Binds address:port (0 picks a free port) and starts serving. Config for an address that is not an
  // IP address, Io naming address:port if it cannot be bound; nothing keeps running on error.
  Status start(const std::string& address, uint16_t port);
  // The bound port (0 before start()).
  uint16_t port() const { return server_.port(); }
  // Closes the listener, lets the requests in progress finish (each bounded to 5 s) and joins the admin
  // thread. Idempotent.
  void stop();

 private:
  boost::asio::io_context io_;
  AdminServer server_;
  std::thread thread_;
};

}  // namespace qim
