#pragma once
// The push role's configuration from the environment (docs/push.md "Configuration"):
//   QIM_PUSH                    on | off (default off): `qim up` runs the push role (and `qim push` is it)
//   QIM_PUSH_VAPID_KEY_FILE     the VAPID private key (PEM, P-256). `qim up`: <data dir>/push/vapid.pem,
//                               made on first start; `qim push`: required for Web Push (unset: Web Push
//                               off). The gateways need none: they answer what the push role published.
//   QIM_PUSH_VAPID_SUBJECT      the VAPID `sub` claim: mailto:admin@localhost
//   QIM_PUSH_COLLAPSE_MS        a burst's window per recipient and conversation: 2000 (0..600000)
//   QIM_PUSH_DEVICE_PER_MINUTE  notifications a device gets in a minute at most: 10 (1..1000)
//   QIM_PUSH_PREVIEW_BYTES      the body's first bytes in a notification: 100 (0: none; at most 1000)
//   QIM_PUSH_TTL_S              how long a push service keeps an undelivered notification: 86400
//   QIM_PUSH_TIMEOUT_MS         one request to a provider: 10000
//   QIM_PUSH_CA_FILE            trust these CAs (PEM) for the providers' TLS instead of the system's (tests)
//   QIM_PUSH_START              latest (default) or earliest: where a push group with no position starts
//   QIM_PUSH_APNS_KEY_FILE      APNs: the token signing key (.p8, P-256); unset: APNs is off. With it:
//   QIM_PUSH_APNS_KEY_ID        its key id (the JWT's kid), QIM_PUSH_APNS_TEAM_ID (iss), QIM_PUSH_APNS_TOPIC
//                               (the app's bundle id), all required; QIM_PUSH_APNS_URL:
//                               https://api.push.apple.com (sandbox: https://api.sandbox.push.apple.com)
//   QIM_PUSH_FCM_SERVICE_ACCOUNT FCM: the service account's JSON key file; unset: FCM is off.
//   QIM_PUSH_FCM_URL            https://fcm.googleapis.com (the token endpoint is the file's token_uri)

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "mailbox/store_options.h"
#include "push/web_push_crypto.h"

namespace qim {

struct PushConfig {
  bool enabled = false;
  std::shared_ptr<const P256Key> vapid;  // null: Web Push is off
  std::string vapid_subject = "mailto:admin@localhost";
  std::chrono::milliseconds collapse{2000};
  uint32_t per_device_per_minute = 10;
  size_t preview_bytes = 100;
  std::chrono::seconds ttl{86400};
  std::chrono::milliseconds timeout{10000};
  std::string ca_file;
  bool start_at_end = true;
  struct Apns {
    std::shared_ptr<const P256Key> key;
    std::string key_id, team_id, topic;
    std::string url = "https://api.push.apple.com";
  };
  std::optional<Apns> apns;  // unset: APNs is off
  struct Fcm {
    std::string service_account_json;
    std::string url = "https://fcm.googleapis.com";
  };
  std::optional<Fcm> fcm;  // unset: FCM is off
};

// `data_dir` set (`qim up`): the VAPID key defaults to <data_dir>/push/vapid.pem and is made if missing.
// Config naming the variable for a bad value, or a key file that cannot be read or is not P-256.
Result<PushConfig> push_config_from_env(const EnvLookup& getenv, const std::optional<std::string>& data_dir);

// The key in `path`; made (and written 0600, its directory created) when missing and `create`. Config
// naming the file otherwise.
Result<std::shared_ptr<const P256Key>> load_vapid_key(const std::string& path, bool create);

}  // namespace qim
