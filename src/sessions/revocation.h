#pragma once
// Session revocation, the rule (docs/adr/0099-session-revocation.md): a user has a not_before, and so has
// each (user, device). A token (auth/token.h) issued strictly before the not_before that applies to its
// device (the later of the two) is revoked: refused at AUTH, and its live connections are closed. A
// revocation is "not_before = now" on the revoking clock, so a token minted after it (a new login) is
// accepted, one minted in the same millisecond included. A token without an issued-at (issued at 0) is
// refused by any revocation of its user or device.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/ids.h"
#include "core/status.h"

namespace qim {

struct RevocationMarks {
  int64_t user_not_before_ms = 0;                       // 0: the user was never revoked as a whole
  std::map<std::string, int64_t> device_not_before_ms;  // by device id; a device absent: never revoked

  // The not_before that applies to `device`: the later of the user's and the device's (0: none).
  int64_t not_before(const DeviceId& device) const;
  bool empty() const { return user_not_before_ms == 0 && device_not_before_ms.empty(); }
  // Raises (never lowers) the user's (`device` unset) or the device's not_before.
  void raise(const std::optional<DeviceId>& device, int64_t not_before_ms);
};

// Whether a token of `device` issued at `issued_at_ms` is revoked by `marks`.
bool is_revoked(const RevocationMarks& marks, const DeviceId& device, int64_t issued_at_ms);

// The revocation of one user (or one device of it) as the message the gateways get through the signal bus
// (delivery/signal_bus.h): a JSON object that is no client frame, recognised by its type
// "~SESSION_REVOKED" and never sent to a client.
std::string encode_revocation_signal(const UserId& user, const std::optional<DeviceId>& device,
                                     int64_t not_before_ms);
bool is_revocation_signal(std::string_view frame);
struct RevocationSignal {
  UserId user;
  RevocationMarks marks;  // one mark: the user's or the device's
};
// InvalidArgument for a frame encode_revocation_signal did not make.
Result<RevocationSignal> decode_revocation_signal(std::string_view frame);

}  // namespace qim
