#pragma once
// The event webhook in a process (docs/webhooks.md): `qim up` runs it when QIM_WEBHOOK_URL is set, and
// `qim webhooks` runs it alone on a shared log (Kafka). It follows fanout's committed position, so it
// needs the group store (PipelineRoles::groups). Its admin routes (loopback, admin header):
//   GET  /admin/webhooks/dead-letters                 the dead letters and the replay cursor (text)
//   POST /admin/webhooks/dead-letters/replay[?from=N] send them again from the cursor (or N): text report;
//                                                     503 when the hook failed one (the rest stay pending)
// `qim webhooks dead-letters list|replay` calls them on the instance running in the data directory.

#include <memory>
#include <optional>

#include "app/config.h"
#include "app/pipeline.h"
#include "gateway/gateway.h"
#include "webhooks/webhook_consumer.h"

namespace qim {

struct WebhookRole {
  std::unique_ptr<Log> dead_letters;
  std::unique_ptr<WebhookConsumer> consumer;  // declared after the log it appends to
};

// Opens the dead-letter log and builds the consumer on the pipeline's Outbox and group store; starts
// nothing. nullopt when QIM_WEBHOOK_URL is unset; Config for a bad webhook variable; the log's errors.
Result<std::optional<WebhookRole>> open_webhook_role(const EnvLookup& env, const AppConfig& config,
                                                     Pipeline& pipeline,
                                                     std::shared_ptr<spdlog::logger> logger);

std::vector<AdminRoute> webhook_admin_routes(WebhookConsumer& consumer);

}  // namespace qim
