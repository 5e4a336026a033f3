#pragma once
// A device's push target (docs/push.md): which provider wakes it and the provider's address of it, as a
// client registers it with PUSH_REGISTER. The token is checked here for its wire form only (what the
// provider says of it comes later: an invalid token reported by the provider unregisters the device).
//
//   fcm      the FCM registration token (printable ASCII, at most 4096 bytes)
//   apns     the APNs device token (hex, 64 to 200 digits)
//   webpush  the browser's PushSubscription as JSON: {"endpoint": "https://...", "keys": {"p256dh":
//            base64url of an uncompressed P-256 point (65 bytes), "auth": base64url of 16 bytes}}

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace qim {

enum class PushProvider { kFcm, kApns, kWebPush };

// "fcm", "apns", "webpush".
std::string_view push_provider_name(PushProvider p);
// nullopt for any other name.
std::optional<PushProvider> parse_push_provider(std::string_view name);

// A Web Push subscription, decoded.
struct WebPushSubscription {
  std::string endpoint;  // http:// or https:// URL
  std::string p256dh;    // 65 bytes: 0x04 || X || Y
  std::string auth;      // 16 bytes
};
// InvalidArgument naming what is wrong.
Result<WebPushSubscription> parse_web_push_subscription(std::string_view json);

// Whether `token` has the wire form of `provider`'s tokens: OK or InvalidArgument naming what is wrong.
Status check_push_token(PushProvider provider, std::string_view token);

// What the registry keeps per device.
struct PushTarget {
  PushProvider provider = PushProvider::kWebPush;
  std::string token;
  int64_t registered_ms = 0;  // when it was registered (a revocation after it silences it)
  bool operator==(const PushTarget&) const = default;
};

}  // namespace qim
