#pragma once
// Sessions on the gateway's admin server (loopback only, the admin header required like every admin route;
// gateway/admin_server.h), what `qim admin sessions` calls (docs/operations.md "Sessions"):
//   GET  /admin/sessions?user=U[&json=1]          the user's devices: last AUTH, live connections, not_before
//   POST /admin/sessions/revoke?user=U[&device=D] revoke every session of U (or of its device D) issued
//                                                 until now: refused at AUTH from now on, live connections
//                                                 closed (close code 4001)
// 400 for a user or device that is not a valid name, 503 when the session store cannot be reached.

#include <string>
#include <vector>

#include "gateway/gateway.h"
#include "sessions/session_service.h"

namespace qim {

std::vector<AdminRoute> session_admin_routes(SessionService& sessions);

// The text `qim admin sessions list` prints: one line per device.
std::string render_devices_text(const UserId& user, const RevocationMarks& marks,
                                const std::vector<DeviceSession>& devices);

}  // namespace qim
