#pragma once
// The server API's routes (docs/api.md, docs/api/openapi.yaml): an HTTP request in, an HTTP answer out,
// independent of the transport (api_server.h) so tests drive it directly. Every endpoint is a door onto the
// same functions the WebSocket frames call: the request is turned into the protocol's frame and parsed by the
// protocol's parser (so the field rules and limits are the frames'), then answered by submit_send,
// plan_group_frame / group_outcome_answer, answer_history, answer_inbox_frame, answer_attach,
// answer_attachment_url and append_message_event; the answer frame becomes
// the HTTP body (without its "ref"), an ERROR frame a problem document with the same code (problem.h).
//
// handle() blocks (store reads, the Outbox append, fanout's decision of a group change or message event):
// call it from a worker thread. Thread-safe.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/api_keys.h"
#include "api/api_options.h"
#include "archiver/history_store.h"
#include "core/clock.h"
#include "gateway/protocol/wire_code.h"
#include "gateway/send_dedup.h"
#include "gateway/token_bucket.h"
#include "groups/group_store.h"
#include "inbox/inbox.h"
#include "lifecycle/message_state.h"
#include "log/log.h"

namespace qim {
class SessionService;
class BeforeSendHook;
class UserRegistry;
class MessageStateStore;
namespace attachments {
class AttachmentService;
}
}  // namespace qim

namespace qim::api {

// What the endpoints call; the pointers must outlive the router. Null groups / inbox / history: their
// endpoints answer UNAVAILABLE (503).
struct ApiDeps {
  Log* outbox = nullptr;
  SendDedup* dedup = nullptr;  // the gateway's table: an Idempotency-Key is a client_msg_id behind both doors
  HistoryStore* history = nullptr;
  GroupStore* groups = nullptr;
  Inbox* inbox = nullptr;
  SessionService* sessions = nullptr;  // devices and revocation (null: those routes answer UNAVAILABLE)
  // Edit and recall marks in history (decision 90), and the edit and recall routes' state (decision 167);
  // null: no marks, and those routes answer UNAVAILABLE as the frames do.
  MessageStateStore* messages = nullptr;
  LifecyclePolicy
      lifecycle;  // QIM_EDIT_WINDOW_MS, QIM_RECALL_WINDOW_MS: fanout's, for the check before the append
  BeforeSendHook* before_send = nullptr;  // the gateway's before-send hook (null: none); both doors ask it
  UserRegistry* users = nullptr;  // QIM_USER_REGISTRY=1: the /v1/users routes and UNKNOWN_USER (null: off)
  // The gateway's attachment rules (Gateway::attachments(): the same ids, budget and client_upload_id
  // claims as the frames'); null without an object store: the attachment routes and a message with
  // `attachments` answer ATTACHMENTS_DISABLED (501).
  attachments::AttachmentService* attachments = nullptr;
  std::shared_ptr<const Clock> clock;
  std::string auth_secret;              // QIM_AUTH_SECRET: tokens minted here verify at AUTH
  size_t max_body_bytes = 16 * 1024;    // QIM_GATEWAY_MAX_BODY_BYTES, as for SEND frames
  uint32_t group_max_members = 10'000;  // QIM_GROUP_MAX_MEMBERS
  int64_t group_apply_wait_ms = 5'000;  // QIM_GROUP_APPLY_WAIT_MS
};

struct ApiRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query, as on the request line
  std::string authorization;
  std::string idempotency_key;
  bool has_idempotency_key = false;
  std::string body;
};

struct ApiResponse {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // e.g. Allow, Retry-After
};

class ApiRouter {
 public:
  ApiRouter(ApiOptions options, ApiDeps deps);
  // The answer to one request: authenticated (Bearer key), rate limited per key, scope checked, routed.
  ApiResponse handle(const ApiRequest& request);
  // A problem answer (for the transport's own refusals: oversize, unparseable HTTP).
  static ApiResponse problem(WireCode code, std::string_view detail, unsigned status = 0);

 private:
  struct Route;
  ApiResponse post_message(const ApiRequest& r, const std::map<std::string, std::string>& q,
                           const std::vector<std::string>& parts);
  ApiResponse group_change(const ApiRequest& r, const std::vector<std::string>& parts, std::string_view type,
                           const std::string& actor_from_query);
  ApiResponse group_read(const std::string& frame_type, const std::string& actor, const std::string& group);
  ApiResponse history(const std::map<std::string, std::string>& q, const std::string& conversation);
  ApiResponse conversations(const std::map<std::string, std::string>& q, const std::string& user);
  ApiResponse mint(const ApiRequest& r);
  // session_routes.cc: a user's devices; revoking a user's or one device's sessions (scope tokens).
  ApiResponse devices(const std::string& user);
  ApiResponse revoke(const std::string& user, const std::optional<std::string>& device);
  // push_routes.cc: a user's push targets: list, register or replace one device's, clear it (scope tokens).
  ApiResponse push_targets(const ApiRequest& r, const std::vector<std::string>& parts);
  // attachment_routes.cc: an upload grant as a user (scope send; the ATTACH frame) and a download URL of a
  // message's attachment for a user (scope read; the ATTACHMENT_URL frame).
  ApiResponse attach(const ApiRequest& r);
  ApiResponse attachment_url(const std::map<std::string, std::string>& q,
                             const std::vector<std::string>& parts);
  // message_event_routes.cc: edit, recall, react to or unreact a message as a user or the system user (scope
  // send; the EDIT, RECALL, REACT and UNREACT frames, gateway/message_event_requests.h).
  ApiResponse message_event(const ApiRequest& r, const std::vector<std::string>& parts);
  // user_routes.cc: the user registry (scope users).
  ApiResponse users(const ApiRequest& r, const std::map<std::string, std::string>& q,
                    const std::vector<std::string>& parts);
  bool take_token(const std::string& key_id);

  const ApiOptions options_;
  const ApiDeps deps_;
  ApiKeyVerifier keys_;
  std::mutex buckets_mu_;
  std::unordered_map<std::string, TokenBucket> buckets_;  // per key id
};

}  // namespace qim::api
