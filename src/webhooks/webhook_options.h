#pragma once
// The event webhook's configuration from the environment (docs/webhooks.md "Configuration"):
//   QIM_WEBHOOK_URL                http://host[:port][/path]; unset: no webhook (`qim up` runs none)
//   QIM_WEBHOOK_SECRET             whsec_<base64 of 16..64 bytes>; required with the URL
//   QIM_WEBHOOK_TIMEOUT_MS         one attempt's bound (connect, send, answer): 5000
//   QIM_WEBHOOK_RETRY_INITIAL_MS   first pause after a failure: 1000, doubling
//   QIM_WEBHOOK_RETRY_MAX_MS       longest pause: 300000 (5 min)
//   QIM_WEBHOOK_RETRY_FOR_MS       how long an event is tried before it is dead-lettered: 7200000 (2 h);
//                                  0: never (the partition waits for the hook)
//   QIM_WEBHOOK_BATCH              Outbox records read per batch: 64
//   QIM_WEBHOOK_COMMIT_INTERVAL_MS the least time between two commits of a partition's position: 1000 (a
//                                  crash resends at most the events acknowledged since); 0: every batch
//   QIM_WEBHOOK_START              earliest (default) or latest: where a consumer group with no committed
//                                  position starts (latest: a hook added to a running deployment does not
//                                  get the Outbox's retained past)

#include <chrono>
#include <optional>
#include <string>

#include "mailbox/store_options.h"
#include "webhooks/hook_sender.h"
#include "webhooks/retry_policy.h"

namespace qim {

struct WebhookConfig {
  HookUrl url;
  std::string key;  // the decoded secret
  std::chrono::milliseconds timeout{5000};
  RetryPolicy retry;
  size_t batch = 64;
  std::chrono::milliseconds commit_interval{1000};
  bool start_at_end = false;
};

// nullopt when QIM_WEBHOOK_URL is unset or empty. Config naming the variable for a malformed value, a
// secret missing or not whsec_ base64, or a URL that is not http://.
Result<std::optional<WebhookConfig>> webhook_config_from_env(const EnvLookup& getenv);

}  // namespace qim
