#include "bench/load/connect.h"

#include "auth/token.h"

namespace qim::load {

Result<Connected> connect_user(const std::string& host, uint16_t port, const std::string& secret,
                               const std::string& user, const std::string& device,
                               std::shared_ptr<client::Runtime> runtime, const Clock& clock,
                               std::function<void(int, std::string_view)> on_close,
                               std::chrono::milliseconds timeout) {
  QIM_ASSIGN_OR_RETURN(UserId user_id, UserId::parse(user));
  QIM_ASSIGN_OR_RETURN(DeviceId device_id, DeviceId::parse(device));
  QIM_ASSIGN_OR_RETURN(std::string token, mint_token(secret, user_id, device_id, 24 * 3'600'000, clock));
  client::ClientOptions co;
  co.host = host;
  co.port = port;
  co.timeout = timeout;
  co.on_close = std::move(on_close);
  QIM_ASSIGN_OR_RETURN(auto c, client::Client::connect(co, std::move(runtime)));
  auto ok = c->auth(token);
  if (!ok.ok()) return Error(ok.code(), "AUTH of " + user + ": " + ok.error().message());
  return Connected{std::move(c), *std::move(ok)};
}

}  // namespace qim::load
