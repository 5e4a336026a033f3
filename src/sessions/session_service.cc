#include "sessions/session_service.h"

#include <fmt/format.h>

namespace qim {

Result<int64_t> SessionService::revoke(const UserId& user, const std::optional<DeviceId>& device) {
  const int64_t now = clock_->now_ms();
  QIM_RETURN_IF_ERROR(store_.revoke(user, device, now));
  if (bus_ != nullptr) {
    const UserId users[] = {user};
    bus_->send(users, encode_revocation_signal(user, device, now));
  }
  return now;
}

std::string devices_json(const UserId& user, const RevocationMarks& marks,
                         const std::vector<DeviceSession>& devices) {
  // Names are [A-Za-z0-9_.@-] (core/name.h): nothing to escape.
  std::string out =
      fmt::format("{{\"user\":\"{}\",\"not_before\":{},\"devices\":[", user.str(), marks.user_not_before_ms);
  for (size_t i = 0; i < devices.size(); ++i) {
    const DeviceSession& d = devices[i];
    out += fmt::format("{}{{\"device\":\"{}\",\"last_auth\":{},\"live\":{},\"not_before\":{}}}", i ? "," : "",
                       d.device, d.last_auth_ms, d.live, d.not_before_ms);
  }
  out += "]}\n";
  return out;
}

}  // namespace qim
