#pragma once
// The gateway's side of the push frames (docs/protocol.md "Push"; protocol/push_frames.h): the caller's
// device registers (or clears) its push target in the registry (push/push_registry.h, cells of the inbox's
// engine), or asks what the push role published (PUSH_CONFIG). Blocking (a store read or write): the
// connection runs it on its lane of the blocking pool, like the inbox frames.

#include <string>

#include "core/clock.h"
#include "core/ids.h"
#include "gateway/gateway_metrics.h"
#include "gateway/protocol/push_frames.h"
#include "inbox/inbox_backend.h"

namespace qim {

// PUSH_REGISTERED, PUSH_UNREGISTERED, PUSH_CONFIG, or an ERROR: the parser's refusal as it is,
// TOO_MANY_DEVICES (kMaxPushDevices other devices registered), UNAVAILABLE (the store did not answer),
// INTERNAL (logged). Each ERROR is counted in `metrics` (optional) by its code.
std::string answer_push_request(InboxBackend& backend, const Clock& clock, const UserId& user,
                                const DeviceId& device, const std::string& ref, const PushRequest& request,
                                GatewayMetrics* metrics = nullptr);

}  // namespace qim
