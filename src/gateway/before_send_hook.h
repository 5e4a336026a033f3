#pragma once
// The before-send hook (docs/webhooks.md "Before send", docs/adr/0120): every SEND, through either door (the
// WebSocket frame and the server API: submit_send in send_request.h), is shown to the deployment's hook
// before it is appended to the Outbox; the hook allows it, rejects it (REJECTED, with its reason) or
// replaces its body. The SEND_ACK waits for the verdict; no I/O thread does: the calls run on a bounded
// pool of workers, one at a time per (sender, device) so a connection's SENDs reach the Outbox in the order
// they came.
//
// Configured from the environment (before_send_config_from_env):
//   QIM_BEFORE_SEND_URL          http://host[:port][/path]; unset: no hook (and no cost: submit_send skips
//   it) QIM_BEFORE_SEND_SECRET       whsec_<base64 of 16..64 bytes>, required with the URL (Standard
//   Webhooks) QIM_BEFORE_SEND_TIMEOUT_MS   one call's bound (connect, send, answer): 500
//   QIM_BEFORE_SEND_POLICY       open (default: a hook that fails or times out allows the message as sent)
//                                or closed (the SEND is refused UNAVAILABLE)
//   QIM_BEFORE_SEND_WORKERS      concurrent calls to the hook (each with its kept-alive connection): 16
//   QIM_BEFORE_SEND_MAX_PENDING  calls queued or running in the process; beyond it a SEND is refused
//                                RATE_LIMITED at once, whatever the policy: 4096

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/ids.h"
#include "core/status.h"
#include "mailbox/store_options.h"

namespace qim {

// The hook's rejection as an error value: PermissionDenied, which nothing else on the SEND path after the
// target's checks returns (the append and the idempotency table fail with Io, Transport, Timeout or
// ResourceExhausted), so the doors answer it REJECTED (send_request.h: send_error_code).
inline constexpr Errc kBeforeSendRejected = Errc::kPermissionDenied;

// What the hook is asked about.
struct BeforeSendCall {
  ConversationId conversation;
  UserId sender;
  DeviceId device;
  std::string client_msg_id;
  std::string body;
};

// The body to append (the SEND's own, or the hook's replacement), or the refusal: kBeforeSendRejected (the
// hook's reject, its reason in the message), Timeout / Transport (the hook failed under the closed policy) or
// ResourceExhausted (too many calls pending).
using BeforeSendDone = std::function<void(Result<std::string> body)>;

class BeforeSendHook {
 public:
  virtual ~BeforeSendHook() = default;
  // Asks the hook about `call`; `done` is called once, on a worker thread, or on this thread at once when
  // the call is refused before it starts (ResourceExhausted: the queue is full; Unavailable-type errors
  // when stopping). Calls of one (sender, device) are made one at a time, in the order they came, and the
  // next starts only after `done` of the previous returned (so `done` may append in order).
  virtual void check(BeforeSendCall call, BeforeSendDone done) = 0;
  // Drops queued calls (their `done` is not called) and joins the workers. Idempotent.
  virtual void stop() = 0;
  // The longest a check() takes to call `done` (the SEND_ACK deadline is extended by it).
  virtual std::chrono::milliseconds bound() const = 0;
};

enum class BeforeSendPolicy { kOpen, kClosed };

struct BeforeSendConfig {
  std::string url;
  std::string key;  // the decoded secret
  std::chrono::milliseconds timeout{500};
  BeforeSendPolicy policy = BeforeSendPolicy::kOpen;
  uint32_t workers = 16;
  size_t max_pending = 4096;
  size_t max_body_bytes = 16 * 1024;  // a replaced body is validated as a SEND's (the gateway's limit)
};

// nullopt when QIM_BEFORE_SEND_URL is unset or empty. Config naming the variable for a malformed value, a
// missing or malformed secret, a URL other than http://.
Result<std::optional<BeforeSendConfig>> before_send_config_from_env(const EnvLookup& getenv);

// The HTTP hook: POSTs the call signed by the Standard Webhooks scheme (webhooks/signature.h) and reads the
// verdict. Config if the URL does not parse.
Result<std::unique_ptr<BeforeSendHook>> make_http_before_send_hook(BeforeSendConfig config);

// The verdict of a hook's 2xx answer `answer` for a SEND of `body`: the body to append, kBeforeSendRejected
// with the reason, or InvalidArgument naming what is wrong with the answer (a hook failure: the policy
// decides). An empty answer allows. Exposed for tests.
Result<std::string> before_send_verdict(std::string_view answer, std::string body, size_t max_body_bytes);

}  // namespace qim
