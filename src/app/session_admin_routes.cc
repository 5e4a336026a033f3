#include "app/session_admin_routes.h"

#include <fmt/format.h>

#include "app/admin_routes.h"
#include "core/utc_time.h"

namespace qim {

namespace {

std::string when(int64_t ms) {
  return ms == 0 ? std::string("-") : utc_time(ms);
}

AdminResponse list(SessionService& sessions, const std::string& query) {
  auto user = UserId::parse(query_param(query, "user").value_or(""));
  if (!user.ok()) return {400, "expected ?user=<user id>: " + user.error().message() + "\n"};
  auto marks = sessions.marks(*user);
  if (!marks.ok()) return {503, marks.error().to_string() + "\n"};
  auto devices = sessions.devices(*user);
  if (!devices.ok()) return {503, devices.error().to_string() + "\n"};
  if (query_param(query, "json") == "1") return {200, devices_json(*user, *marks, *devices)};
  return {200, render_devices_text(*user, *marks, *devices)};
}

AdminResponse revoke(SessionService& sessions, const std::string& query) {
  auto user = UserId::parse(query_param(query, "user").value_or(""));
  if (!user.ok())
    return {400, "expected ?user=<user id>[&device=<device id>]: " + user.error().message() + "\n"};
  std::optional<DeviceId> device;
  if (auto d = query_param(query, "device")) {
    auto parsed = DeviceId::parse(*d);
    if (!parsed.ok()) return {400, "device: " + parsed.error().message() + "\n"};
    device = std::move(parsed).value();
  }
  auto nb = sessions.revoke(*user, device);
  if (!nb.ok()) return {503, nb.error().to_string() + "\n"};
  return {200,
          fmt::format("revoked {} of {} issued before {} (not_before {}); their live connections close\n",
                      device ? "the sessions of device " + device->str() : std::string("every session"),
                      user->str(), utc_time(*nb), *nb)};
}

}  // namespace

std::string render_devices_text(const UserId& user, const RevocationMarks& marks,
                                const std::vector<DeviceSession>& devices) {
  std::string out =
      fmt::format("user {}: all sessions not_before {}\n", user.str(), when(marks.user_not_before_ms));
  if (devices.empty()) return out + "no device seen\n";
  out += fmt::format("{:<24} {:>5}  {:<26} {}\n", "device", "live", "last AUTH", "not_before");
  for (const auto& d : devices)
    out += fmt::format("{:<24} {:>5}  {:<26} {}\n", d.device, d.live, when(d.last_auth_ms),
                       when(d.not_before_ms));
  return out;
}

std::vector<AdminRoute> session_admin_routes(SessionService& sessions) {
  return {
      AdminRoute{"GET", "/admin/sessions",
                 [&sessions](const std::string& query, const std::string&) { return list(sessions, query); }},
      AdminRoute{
          "POST", "/admin/sessions/revoke",
          [&sessions](const std::string& query, const std::string&) { return revoke(sessions, query); }},
  };
}

}  // namespace qim
