#pragma once
// The push role in a process (docs/push.md): `qim up` runs it when QIM_PUSH=on, and `qim push` runs it alone
// on a shared log (Kafka) with the routing Redis (the sessions: who is online, who was revoked). It follows
// fanout's committed position (group messages' fate) and reads the inbox's engine (the registry, mutes,
// the badge), so its pipeline opens the group store and the inbox.

#include <memory>
#include <optional>

#include "app/config.h"
#include "app/pipeline.h"
#include "push/push_consumer.h"
#include "push/push_options.h"

namespace qim {

struct PushRole {
  std::unique_ptr<PushConsumer> consumer;
};

// What PUSH_CONFIG tells clients of `config` (the providers configured, the VAPID public key).
PushDoor push_door_of(const PushConfig& config);

// Builds the consumer on the pipeline's Outbox, inbox and group store, and `sessions` (may be null); starts
// nothing. nullopt when push is off (QIM_PUSH unset or off; `force`: `qim push` runs it whatever QIM_PUSH
// says); Config when no provider is configured or the pipeline has no inbox.
Result<std::optional<PushRole>> open_push_role(const PushConfig& config, Pipeline& pipeline,
                                               SessionStore* sessions, bool force,
                                               std::shared_ptr<const Clock> clock,
                                               std::shared_ptr<spdlog::logger> logger);

}  // namespace qim
