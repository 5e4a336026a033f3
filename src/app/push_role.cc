#include "app/push_role.h"

#include <curl/curl.h>

#include "auth/base64url.h"
#include "fanout/fanout.h"
#include "push/apns_sender.h"
#include "push/fcm_sender.h"
#include "push/web_push_sender.h"

namespace qim {

PushDoor push_door_of(const PushConfig& config) {
  PushDoor door;
  if (config.vapid) {
    door.providers.push_back(PushProvider::kWebPush);
    door.vapid_public_key = base64url_encode(config.vapid->public_raw());
  }
  if (config.apns) door.providers.push_back(PushProvider::kApns);
  if (config.fcm) door.providers.push_back(PushProvider::kFcm);
  return door;
}

Result<std::optional<PushRole>> open_push_role(const PushConfig& config, Pipeline& pipeline,
                                               SessionStore* sessions, bool force,
                                               std::shared_ptr<const Clock> clock,
                                               std::shared_ptr<spdlog::logger> logger) {
  if (!config.enabled && !force) return std::optional<PushRole>();
  if (pipeline.inbox() == nullptr)
    return Error(Errc::kConfig, "push needs the inbox (its registry, mutes and badge): this store has none");
  if (!config.vapid && !config.apns && !config.fcm)
    return Error(
        Errc::kConfig,
        "push has no provider configured: set QIM_PUSH_VAPID_KEY_FILE (Web Push) or QIM_PUSH_APNS_KEY_FILE "
        "(APNs; docs/push.md)");
  // libcurl's global state, once, before any thread uses it (not thread-safe itself).
  curl_global_init(CURL_GLOBAL_DEFAULT);
  PushConsumerOptions o;
  o.collapse = config.collapse;
  o.per_device_per_minute = config.per_device_per_minute;
  o.preview_bytes = config.preview_bytes;
  o.start_at_end = config.start_at_end;
  o.follow = kFanoutGroup;
  o.clock = std::move(clock);
  o.logger = logger;
  PushDeps deps;
  deps.outbox = &pipeline.outbox();
  deps.registry = &pipeline.inbox()->backend();
  deps.groups = pipeline.groups();
  deps.inbox = pipeline.inbox();
  deps.sessions = sessions;
  std::optional<ApnsOptions> apns;
  if (config.apns) {
    apns.emplace();
    apns->key = config.apns->key;
    apns->key_id = config.apns->key_id;
    apns->team_id = config.apns->team_id;
    apns->topic = config.apns->topic;
    apns->url = config.apns->url;
    apns->ttl = config.ttl;
    apns->http.timeout = config.timeout;
    apns->http.ca_file = config.ca_file;
    logger->info("push: APNs on ({}, topic {})", apns->url, apns->topic);
  }
  std::optional<FcmOptions> fcm;
  if (config.fcm) {
    auto account = parse_service_account(config.fcm->service_account_json);
    if (!account.ok())
      return Error(Errc::kConfig, "QIM_PUSH_FCM_SERVICE_ACCOUNT: " + account.error().message());
    fcm.emplace();
    fcm->account = std::move(account).value();
    fcm->url = config.fcm->url;
    fcm->http.timeout = config.timeout;
    fcm->http.ca_file = config.ca_file;
    // The key is checked now: a bad one is refused at start, not at the first notification.
    if (auto probe = make_fcm_sender(*fcm); !probe.ok())
      return Error(Errc::kConfig, "QIM_PUSH_FCM_SERVICE_ACCOUNT: " + probe.error().message());
    logger->info("push: FCM on (project {}, {})", fcm->account.project_id, fcm->url);
  }
  WebPushOptions web;
  web.vapid = config.vapid;
  web.subject = config.vapid_subject;
  web.ttl = config.ttl;
  web.http.timeout = config.timeout;
  web.http.ca_file = config.ca_file;
  logger->info(
      "push: web push on (VAPID key {}), bursts collapsed over {} ms, at most {} per device a minute",
      base64url_encode(config.vapid->public_raw()).substr(0, 12) + "...", config.collapse.count(),
      config.per_device_per_minute);
  PushRole role;
  role.consumer = std::make_unique<PushConsumer>(
      deps,
      [web, apns, fcm] {
        auto senders = std::make_unique<ProviderSenders>();
        if (web.vapid) senders->add(PushProvider::kWebPush, make_web_push_sender(web));
        if (apns) senders->add(PushProvider::kApns, make_apns_sender(*apns));
        if (fcm) senders->add(PushProvider::kFcm, std::move(make_fcm_sender(*fcm)).value());  // checked above
        return senders;
      },
      std::move(o));
  return std::optional<PushRole>(std::move(role));
}

}  // namespace qim
