#pragma once
// Web Push (RFC 8030) with VAPID (RFC 8292) and aes128gcm (RFC 8291): a POST of the encrypted payload to
// the subscription's endpoint with `TTL`, `Urgency: normal`, `Topic` (the conversation's collapse id: the
// push service keeps only the latest of a topic for an offline browser), `Content-Encoding: aes128gcm` and
// `Authorization: vapid t=..., k=...`. 201/200/202: sent; 404 and 410: rejected (the subscription expired
// or was withdrawn); anything else, or no answer: failed.

#include <chrono>
#include <memory>
#include <string>

#include "push/http_client.h"
#include "push/push_sender.h"
#include "push/web_push_crypto.h"

namespace qim {

struct WebPushOptions {
  std::shared_ptr<const P256Key> vapid;            // required
  std::string subject = "mailto:admin@localhost";  // QIM_PUSH_VAPID_SUBJECT (a mailto: or https: URL)
  std::chrono::seconds ttl{86400};                 // QIM_PUSH_TTL_S: how long the push service keeps it
  HttpClientOptions http;
};

std::unique_ptr<PushSender> make_web_push_sender(WebPushOptions options);

}  // namespace qim
