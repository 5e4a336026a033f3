#include "app/role_admin.h"

namespace qim {

RoleAdmin::RoleAdmin(std::function<std::string()> metrics_text, std::vector<AdminRoute> routes)
    : server_(io_, std::move(metrics_text), std::move(routes)) {}

RoleAdmin::~RoleAdmin() {
  stop();
}

Status RoleAdmin::start(const std::string& address, uint16_t port) {
  QIM_RETURN_IF_ERROR(server_.listen(address, port));
  thread_ = std::thread([this] { io_.run(); });
  return {};
}

void RoleAdmin::stop() {
  if (!thread_.joinable()) return;
  server_.close();
  // Sessions still open hold work; stopping the context ends them (each is bounded to 5 s anyway).
  io_.stop();
  thread_.join();
}

}  // namespace qim
