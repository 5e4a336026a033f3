#pragma once
// Signed access tokens: who a connection is. A token is base64url(payload) "." base64url(mac), where
// payload = "qim1|<user>|<device>|<expiry ms>|<issued-at ms>" and mac = HMAC-SHA256(secret, first part).
// Stateless: any gateway holding the secret (QIM_AUTH_SECRET) verifies it; nothing is stored. The issued-at
// field is what session revocation compares with a user's or device's not_before (sessions/revocation.h);
// a token minted before it existed (four fields) verifies with issued_at_ms 0, so any revocation of its
// user or device refuses it.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/ids.h"
#include "core/status.h"

namespace qim {

// The authenticated identity of a connection. The sender of every SEND is this, never a client field.
struct Principal {
  UserId user;
  DeviceId device;
  int64_t expires_at_ms = 0;
  int64_t issued_at_ms = 0;  // by the minting clock; 0 for a token without the field
};

inline constexpr size_t kMaxTokenBytes = 1024;

// A token for (user, device) valid for `ttl_ms` from clock.now_ms(). Config for an empty secret;
// InvalidArgument for ttl_ms <= 0, or a user or device that is not a valid name (e.g. made by unchecked()).
Result<std::string> mint_token(std::string_view secret, const UserId& user, const DeviceId& device,
                               int64_t ttl_ms, const Clock& clock);

// The principal a token names. Unauthenticated with a message that starts with "token malformed",
// "token signature does not match" or "token expired"; the MAC is compared in constant time and checked
// before anything in the payload is trusted. A signed payload whose user or device is not a valid name
// (core/name.h: no ':') is "token malformed: <why>". Config for an empty secret.
Result<Principal> verify_token(std::string_view secret, std::string_view token, const Clock& clock);

}  // namespace qim
