#pragma once
// GatewayOptions from the environment (SYSTEM.md section 4: "bad configuration is a clear error at start,
// naming the variable"). An unset variable keeps the default of GatewayOptions.

#include "gateway/gateway.h"
#include "mailbox/store_options.h"

namespace qim {

// Reads QIM_GATEWAY_LISTEN, QIM_GATEWAY_PORT, QIM_ADMIN_LISTEN, QIM_ADMIN_PORT, QIM_AUTH_SECRET,
// QIM_DELIVERY_MODE, QIM_GATEWAY_THREADS, QIM_GATEWAY_MAX_CONNECTIONS, QIM_GATEWAY_MAX_UNAUTHENTICATED,
// QIM_GATEWAY_MAX_UNAUTHENTICATED_PER_PEER, QIM_GATEWAY_MAX_FRAME_BYTES,
// QIM_GATEWAY_MAX_BODY_BYTES, QIM_GATEWAY_RATE (frames per second per connection),
// QIM_GATEWAY_MAX_OUTBOUND (queued frames per connection), QIM_GATEWAY_MAX_OUTBOUND_BYTES, QIM_TLS_CERT and
// QIM_TLS_KEY (both or neither), QIM_WEB_DIR, QIM_WEB_DEV_TOKENS (0 or 1), QIM_GROUP_MAX_MEMBERS,
// QIM_GROUP_APPLY_WAIT_MS, QIM_GATEWAY_MAX_PENDING, QIM_GATEWAY_PENDING_DEADLINE_MS,
// QIM_GATEWAY_BLOCK_CACHE_MS, QIM_SEND_ACK_DEADLINE_MS. Config naming the variable on a bad value. Files are
// not opened here: the gateway's start() loads them and names what does not load.
Result<GatewayOptions> gateway_options_from_env(const EnvLookup& getenv);

}  // namespace qim
