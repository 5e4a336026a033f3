#pragma once
// APNs (Apple Push Notification service, the HTTP/2 provider API): `POST /3/device/<token>` over HTTP/2 with
// token-based authentication: `authorization: bearer <JWT ES256 {iss: team id, iat}>` with the key's id as
// `kid` in its header, signed with the .p8 key (P-256); the JWT is reused for 50 minutes (Apple refuses one
// refreshed more often than every 20 minutes and one older than an hour). Headers `apns-topic` (the app's
// bundle id), `apns-push-type: alert`, `apns-priority: 10`, `apns-collapse-id` (the conversation's collapse
// id), `apns-expiration`. The body: {"aps": {"alert": {"title": sender, "body": preview}, "badge",
// "sound": "default", "thread-id": conversation}, "qim": the payload of push_sender.h}.
// 200: sent; 410, and 400 with reason BadDeviceToken or DeviceTokenNotForTopic: rejected (unregistered);
// 403 ExpiredProviderToken / InvalidProviderToken: a new JWT next time, failed; anything else: failed.

#include <chrono>
#include <memory>
#include <string>

#include "push/http_client.h"
#include "push/push_sender.h"
#include "push/web_push_crypto.h"

namespace qim {

struct ApnsOptions {
  std::shared_ptr<const P256Key> key;              // QIM_PUSH_APNS_KEY_FILE (the .p8)
  std::string key_id;                              // QIM_PUSH_APNS_KEY_ID
  std::string team_id;                             // QIM_PUSH_APNS_TEAM_ID
  std::string topic;                               // QIM_PUSH_APNS_TOPIC (the bundle id)
  std::string url = "https://api.push.apple.com";  // QIM_PUSH_APNS_URL (sandbox: api.sandbox.push.apple.com)
  std::chrono::seconds ttl{86400};
  HttpClientOptions http;  // http2 is forced on
};

// The APNs alert body of a notification (also for tests).
std::string apns_body(const PushNotification& n);

std::unique_ptr<PushSender> make_apns_sender(ApnsOptions options);

}  // namespace qim
