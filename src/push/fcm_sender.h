#pragma once
// FCM HTTP v1: `POST <url>/v1/projects/<project>/messages:send` with `Authorization: Bearer <access token>`.
// The access token comes from the service account (its JSON key file): a JWT signed RS256 with the
// account's private key ({iss: client_email, scope: .../auth/firebase.messaging, aud: token_uri, iat,
// exp: +1 h}) exchanged at its token_uri (grant_type urn:ietf:params:oauth:grant-type:jwt-bearer); reused
// until a minute before it expires, or a 401. The message: {"message": {"token", "notification": {title:
// sender, body: preview}, "data": the payload's fields as strings, "android": {"collapse_key", "priority":
// "high", "notification": {"tag", "notification_count"}}, "apns": {"headers": {"apns-collapse-id"}},
// "webpush": {"headers": {"Topic"}}}} with the conversation's collapse id. 200: sent; 404 (UNREGISTERED):
// rejected (unregistered); anything else: failed.

#include <memory>
#include <string>

#include "core/status.h"
#include "push/http_client.h"
#include "push/push_sender.h"

typedef struct evp_pkey_st EVP_PKEY;

namespace qim {

struct ServiceAccount {
  std::string project_id;
  std::string client_email;
  std::string private_key_id;
  std::string private_key_pem;
  std::string token_uri;
};
// The fields above of a service account's JSON key file. InvalidArgument naming a missing field.
Result<ServiceAccount> parse_service_account(std::string_view json);

struct FcmOptions {
  ServiceAccount account;                          // QIM_PUSH_FCM_SERVICE_ACCOUNT (the file's content)
  std::string url = "https://fcm.googleapis.com";  // QIM_PUSH_FCM_URL
  HttpClientOptions http;
};

// The v1 message of a notification to `token` (also for tests).
std::string fcm_message(const std::string& token, const PushNotification& n);

// InvalidArgument if the account's private key is not a PEM RSA key.
Result<std::unique_ptr<PushSender>> make_fcm_sender(FcmOptions options);

}  // namespace qim
