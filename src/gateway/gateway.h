#pragma once
// The gateway: clients' WebSocket endpoint (protocol in docs/protocol.md). It authenticates, appends SENDs
// to the Outbox and answers SEND_ACK once the append is durable, serves SYNC from the mailbox (never above
// the frontier) and HISTORY from the history store, and pushes entries the MailboxNode reports visible.
// Health and Prometheus metrics are served on a separate admin port bound to loopback by default.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "archiver/history_store.h"
#include "attachments/attachment_options.h"
#include "attachments/attachment_service.h"
#include "attachments/object_store.h"
#include "attachments/upload_budget.h"
#include "core/clock.h"
#include "core/status.h"
#include "delivery/notifier.h"
#include "delivery/signal_bus.h"
#include "gateway/route_registrar.h"
#include "gateway/send_dedup.h"
#include "groups/group_store.h"
#include "lifecycle/message_state_store.h"
#include "log/log.h"
#include "mailbox/store.h"

namespace qim {

class Inbox;  // inbox/inbox.h
class PresenceHub;
class SessionStore;    // sessions/session_store.h
class BeforeSendHook;  // gateway/before_send_hook.h
class UserRegistry;    // users/user_registry.h

// The SLO's latency bound (docs/benchmarks.md: end-to-end P99 <= 250 ms): a SEND_ACK later than this cannot
// be within it, so `qim up` refuses such a SEND instead (GatewayOptions::send_ack_deadline_ms, decision 105).
inline constexpr int64_t kSloSendAckDeadlineMs = 250;

struct GatewayOptions {
  std::string listen_address = "127.0.0.1";  // QIM_GATEWAY_LISTEN
  uint16_t port = 7400;                      // QIM_GATEWAY_PORT; 0 picks a free port
  std::string admin_address = "127.0.0.1";   // QIM_ADMIN_LISTEN: health + /metrics, loopback by default
  uint16_t admin_port = 7401;                // QIM_ADMIN_PORT; 0 picks a free port
  std::string auth_secret;                   // QIM_AUTH_SECRET: HMAC key of tokens (required)
  size_t max_frame_bytes = 96 * 1024;        // frames over this are refused
  size_t max_body_bytes = 16 * 1024;         // SEND bodies over this are refused (<= kMaxBodyBytes)
  uint32_t max_frames_per_second = 200;      // per connection; over it frames are refused
  uint32_t max_connections = 10'000;
  // Connections not yet authenticated (from the TCP accept to AUTH_OK), over all peers and per peer
  // address (QIM_GATEWAY_MAX_UNAUTHENTICATED, QIM_GATEWAY_MAX_UNAUTHENTICATED_PER_PEER): over either the
  // socket is closed at accept (unauthenticated_slots.h).
  uint32_t max_unauthenticated = 1'000;
  uint32_t max_unauthenticated_per_peer = 32;
  uint32_t threads = 1;
  // The CPUs the I/O threads run on (QIM_CPU_PLACEMENT, core/cpu_placement.h); empty: wherever the thread
  // that starts the gateway may run.
  std::vector<int> io_cpus;
  std::string data_dir;  // unused: the send-dedup table is rebuilt from the Outbox instead (protocol.md)
  // Added with the implementation (defaults keep earlier callers unchanged):
  std::string delivery_mode = "hybrid";  // QIM_DELIVERY_MODE: hybrid (push + SYNC), push, pull
  size_t max_outbound_frames = 4096;     // a connection this far behind is closed (1013); it then SYNCs
  size_t max_outbound_bytes = 8 << 20;   // ... or with this many bytes queued
  int64_t auth_timeout_ms = 10'000;      // a connection without AUTH by then is closed
  size_t dedup_capacity = 200'000;       // SEND idempotency keys kept (rebuilt from the Outbox at start)
  int64_t dedup_window_ms = 86'400'000;  // how long a client_msg_id stays a duplicate
  uint32_t blocking_threads = 2;         // threads for store and history reads (SYNC, HISTORY, group checks)
  // TLS (both or neither): the client port then serves wss:// (and the web page over https://) only.
  std::string tls_cert_file;  // QIM_TLS_CERT: PEM certificate chain
  std::string tls_key_file;   // QIM_TLS_KEY: PEM private key of its first certificate
  // Plain HTTP on the client port (docs/running.md "The web chat page"):
  std::string web_dir;      // QIM_WEB_DIR: static files served for GET requests that are no upgrade
  bool dev_tokens = false;  // QIM_WEB_DEV_TOKENS=1: GET /dev/token mints tokens, for loopback peers only
  // Groups (docs/protocol.md "Groups"):
  uint32_t group_max_members = 10'000;  // QIM_GROUP_MAX_MEMBERS (fanout reads the same variable)
  int64_t group_apply_wait_ms = 5'000;  // QIM_GROUP_APPLY_WAIT_MS: how long a GROUP_* change waits for fanout
  // Work on the worker pools per connection (docs/protocol.md "Limits and closes"): SYNC, HISTORY, GROUP_*
  // frames and group membership checks answered not yet; a frame over it is answered RATE_LIMITED at once.
  uint32_t max_pending_per_connection = 32;  // QIM_GATEWAY_MAX_PENDING
  // Work not started on a pool this long after its frame came is not done; its frame is answered UNAVAILABLE.
  int64_t pending_deadline_ms = 5'000;  // QIM_GATEWAY_PENDING_DEADLINE_MS
  // How long who blocks a connected user is kept for their direct SENDs' and TYPINGs' checks (decision
  // 166): a block holds once its signal reaches the sender's gateway, at the latest this long after its
  // BLOCK_OK if the signal was lost. 0: read on every check.
  int64_t block_cache_ms = 5'000;  // QIM_GATEWAY_BLOCK_CACHE_MS
  // Sessions (docs/protocol.md "Session revocation"): how often the gateway asks the session store which
  // users were revoked (its catch-up when a revocation's push was missed): the bound on closing a revoked
  // session's live connection.
  int64_t session_recheck_ms = 1'000;  // QIM_SESSION_RECHECK_MS
  // A SEND whose Outbox append is not durable this long after it started (decision 105) is answered
  // UNAVAILABLE ("deadline exceeded") instead of a SEND_ACK later than that; the append goes on and a retry
  // with the same client_msg_id is deduplicated. 0: no deadline (the log's own bound only).
  // QIM_SEND_ACK_DEADLINE_MS; with the embedded Outbox `qim` defaults it to kSloSendAckDeadlineMs.
  int64_t send_ack_deadline_ms = 0;
};

// An extra endpoint of the admin server (loopback only), e.g. a test knob a deployment registers.
struct AdminResponse {
  unsigned status = 200;
  std::string body;
};
struct AdminRoute {
  std::string method;  // "GET" or "POST"
  std::string path;    // exact match, e.g. "/admin/sweep"
  std::function<AdminResponse(const std::string& query, const std::string& body)> handler;
};

struct GatewayDeps {
  Log* outbox = nullptr;            // where SENDs are appended
  MailboxStore* mailbox = nullptr;  // SYNC reads
  HistoryStore* history = nullptr;  // HISTORY reads
  std::shared_ptr<const Clock> clock;
  uint32_t shard_count = 16;
  // Optional: more /metrics text appended after the gateway's own (e.g. the node's store counters).
  std::function<std::string()> extra_metrics;
  std::vector<AdminRoute> admin_routes;  // optional extra admin endpoints
  // Optional (several gateways): records users' routes; must outlive the gateway. Null: nothing recorded.
  RouteRegistrar* routes = nullptr;
  // Optional (several gateways): the SEND idempotency table shared by the gateways; must outlive the
  // gateway. Null: the gateway's own in-memory table.
  SendDedup* send_dedup = nullptr;
  // Optional: group membership (GROUP_* frames, SEND and HISTORY to groups); null: those are refused
  // with UNAVAILABLE. Must outlive the gateway.
  GroupStore* groups = nullptr;
  // Optional: the inbox (READ, CONVERSATIONS, RECEIPTS, SETTINGS frames), over `mailbox` and the inbox
  // backend of its engine (inbox/inbox.h); null: those are refused with UNAVAILABLE. Must outlive the
  // gateway.
  Inbox* inbox = nullptr;
  // Optional: where ephemeral signals go (typing, presence, read state; delivery/signal_bus.h): a
  // LocalSignalBus attached to this gateway's signal_sink() in one process, a RedisSignalBus across
  // gateways. Null: the gateway's own LocalSignalBus over its connections. Must outlive the gateway.
  SignalBus* signals = nullptr;
  // Optional: presence (presence/presence_hub.h: connections counted, PRESENCE_SUBSCRIBE, pushes). Null:
  // the gateway's own hub over an in-memory exchange (presence among its own connections; no privacy
  // settings, no implicit peers). Must outlive the gateway.
  PresenceHub* presence = nullptr;
  // Optional: session revocation (sessions/session_store.h): checked at each AUTH (a token issued before
  // its user's or device's not_before is refused), watched every session_recheck_ms for revocations whose
  // push was missed, and told of each AUTH and close (a user's devices). Null: tokens are valid until their
  // expiry. Must outlive the gateway.
  SessionStore* sessions = nullptr;
  // Optional: EDIT and RECALL (docs/adr/0090): the message state store fanout writes, and the windows the
  // gateway refuses early by (fanout's own decide). Null: those frames are refused with UNAVAILABLE and
  // HISTORY carries no edit or recall marks. Must outlive the gateway.
  MessageStateStore* messages = nullptr;
  LifecyclePolicy lifecycle;
  // Optional: the before-send hook every SEND is shown to before its append (before_send_hook.h,
  // docs/webhooks.md "Before send"). Null: none. Must outlive the gateway (stop it after the gateway).
  BeforeSendHook* before_send = nullptr;
  // Optional: the user registry (QIM_USER_REGISTRY=1, users/user_registry.h): a direct SEND or a group add
  // naming a user it does not hold is refused UNKNOWN_USER. Null: any name. Must outlive the gateway.
  const UserRegistry* users = nullptr;
  // Optional: where attachments live (attachments/object_store.h; docs/protocol.md "Attachments"), and the
  // rules' settings. Null: ATTACH, ATTACHMENT_URL and a SEND with attachments are refused with
  // ATTACHMENTS_DISABLED; everything else works the same. Must outlive the gateway.
  attachments::ObjectStore* objects = nullptr;
  attachments::AttachmentOptions attachment_options;
  // Optional: the daily upload budget ATTACH grants are charged to (attachments/upload_budget.h): the one
  // every gateway of the deployment shares (the routing Redis; docs/adr/0158). Null: a budget in this
  // gateway's memory (`qim up`: one gateway). Must outlive the gateway.
  attachments::UploadBudget* upload_budget = nullptr;
};

class Gateway {
 public:
  virtual ~Gateway() = default;
  // Binds and starts serving. Io if a port cannot be bound; Config for bad options (e.g. no secret, a TLS
  // certificate or key that does not load, a web directory that does not exist).
  virtual Status start() = 0;
  // Stops accepting, closes connections, returns when every in-flight SEND is answered.
  virtual void stop() = 0;
  virtual uint16_t port() const = 0;        // the bound client port
  virtual uint16_t admin_port() const = 0;  // the bound admin port
  // Where the MailboxNode reports visible entries (in-process delivery).
  virtual DeliveryNotifier& notifier() = 0;
  // Where signals for this gateway's live connections land (a LocalSignalBus or the routing subscriber).
  virtual SignalSink& signal_sink() = 0;
  // The bus the gateway sends signals on: deps.signals, or its own.
  virtual SignalBus& signals() = 0;
  // The attachment rules the frames call (over deps.objects, keyed by the auth secret, charged to
  // deps.upload_budget), for the server API's door onto them (docs/adr/0165); null without an object store.
  // Lives as long as the gateway.
  virtual attachments::AttachmentService* attachments() = 0;
};

std::unique_ptr<Gateway> make_gateway(GatewayOptions options, GatewayDeps deps);

}  // namespace qim
