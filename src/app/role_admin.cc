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
  // The close runs on the admin thread; once the listener is closed and the requests in progress are
  // answered (each is bounded to 5 s), the io context runs out of work and the thread ends. (Stopping the
  // context instead could drop the posted close and leave the port accepting connections no one serves.)
  server_.close();
  thread_.join();
}

}  // namespace qim
